package io.mooncake.dist.transfer;

/** The status byte of a response; every value other than {@link #OK} is an error frame. */
enum Status {
  OK(0),
  NOT_FOUND(1),
  RANGE_OUT_OF_BOUNDS(2),
  SOURCE_ERROR(3),
  BAD_REQUEST(4),
  UNSUPPORTED_VERSION(5),
  UNAUTHENTICATED(6),
  BUSY(7);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  int code() {
    return code;
  }

  /**
   * @return the status with this wire code, or {@code null} if the code is unknown
   */
  static Status fromCode(int code) {
    for (Status s : values()) {
      if (s.code == code) {
        return s;
      }
    }
    return null;
  }

  /** How a client reports this error status to its caller. */
  ChunkTransferException.Kind failureKind() {
    return switch (this) {
      case NOT_FOUND -> ChunkTransferException.Kind.NOT_FOUND;
      case RANGE_OUT_OF_BOUNDS -> ChunkTransferException.Kind.RANGE_OUT_OF_BOUNDS;
      case SOURCE_ERROR -> ChunkTransferException.Kind.SOURCE_ERROR;
      case UNAUTHENTICATED -> ChunkTransferException.Kind.AUTHENTICATION;
      case BUSY -> ChunkTransferException.Kind.BUSY;
      // The server says *we* spoke badly: a bug or version skew on one side, not a data problem.
      case OK, BAD_REQUEST, UNSUPPORTED_VERSION -> ChunkTransferException.Kind.PROTOCOL;
    };
  }
}
