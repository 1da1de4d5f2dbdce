import Foundation
import Synchronization

/// The `dev` demo's standard output, shared by the live summary and the examples: on a terminal the
/// summary is one line redrawn in place, and an example printed meanwhile goes above it; otherwise
/// everything is plain lines.
final class DemoConsole: Sendable {
    /// Whether standard output is a terminal.
    let isTerminal: Bool
    /// The summary line last drawn in place (terminal only), to redraw below an example.
    private let status = Mutex<String?>(nil)

    /// A console on standard output.
    init(isTerminal: Bool = isatty(STDOUT_FILENO) == 1) {
        self.isTerminal = isTerminal
    }

    /// Shows the summary line: redrawn in place on a terminal, a line of its own otherwise.
    func showStatus(_ line: String) {
        status.withLock { status in
            if isTerminal {
                status = line
                write("\r\u{1B}[2K" + line)
            } else {
                write(line + "\n")
            }
        }
    }

    /// Prints `text` (lines), above the summary line on a terminal.
    func show(_ text: String) {
        status.withLock { status in
            if isTerminal {
                write("\r\u{1B}[2K" + text + "\n" + (status ?? ""))
            } else {
                write(text + "\n")
            }
        }
    }

    /// Prints the final line, leaving the in-place summary line behind.
    func finish(_ line: String) {
        status.withLock { status in
            write((isTerminal && status != nil ? "\n" : "") + line + "\n")
            status = nil
        }
    }

    /// Writes unbuffered: whoever reads the demo's output sees each line as it happens.
    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
