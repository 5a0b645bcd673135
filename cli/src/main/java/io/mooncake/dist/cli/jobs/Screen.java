package io.mooncake.dist.cli.jobs;

import java.io.PrintWriter;

/**
 * Where {@code watch} shows its frames: redrawn in place on a terminal, appended line by line
 * anywhere else (a log file, a pipe, CI), where cursor movements would only be noise.
 */
interface Screen {
  void show(WatchView.Frame frame);

  /** Appends the frame's change lines. */
  static Screen lines(PrintWriter out) {
    return frame -> {
      frame.changes().forEach(out::println);
      out.flush();
    };
  }

  /** Redraws the frame's screen over the previous one with ANSI cursor movements. */
  static Screen redrawing(PrintWriter out) {
    return new Screen() {
      private int shown;

      @Override
      public void show(WatchView.Frame frame) {
        StringBuilder sb = new StringBuilder();
        if (shown > 0) {
          sb.append("\033[").append(shown).append('F');
        }
        for (String line : frame.screen()) {
          sb.append("\033[2K").append(line).append('\n');
        }
        // A frame with fewer lines than the last must not leave the old tail on screen.
        sb.append("\033[J");
        out.print(sb);
        out.flush();
        shown = frame.screen().size();
      }
    };
  }
}
