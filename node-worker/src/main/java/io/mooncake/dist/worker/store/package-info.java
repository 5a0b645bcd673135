/**
 * The node-side local model store: the file operations a node worker performs for its tasks.
 *
 * <p>A node stores each model file once, at {@code
 * <data-dir>/models/<provider>/<model_id>/<revision>/<format>/<path>}; an object is a byte range of
 * that file, never a file of its own ("write the bytes once"). While a file is incomplete it lives
 * next to its final name as {@code <final>.partial}, sized to the file size; only when every byte
 * is written and verified is it fsynced and atomically renamed to the final name (and the directory
 * fsynced), so a reader never sees a half-written model file.
 *
 * <p>Every failure surfaces as a {@link io.mooncake.dist.worker.store.StoreException} that says in
 * plain words which file or URL failed and why, and whether another attempt is worth it. All data
 * moves through bounded buffers; no file or object is ever held in memory.
 *
 * <p>No database and no networking of its own, except reading HTTP(S) download sources.
 */
package io.mooncake.dist.worker.store;
