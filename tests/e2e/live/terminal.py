#!/usr/bin/python3
"""terminal.py SCREEN -- CMD [ARGS...]: runs CMD on a pseudo-terminal 120 columns by 40
lines (its stdin, stdout and stderr), and writes to SCREEN what a terminal shows once it
ended: every line the cursor reached, top to bottom, after the cursor movements and
erasures that profopt-analyze's live panel uses (CR, LF, BS, CSI n A/B/C/D, K, J; SGR is
ignored). Lines that scrolled off the top of a real screen are kept. Exits with CMD's
status (128+N when signal N ended it)."""
import fcntl
import os
import re
import struct
import sys
import termios

COLUMNS, LINES = 120, 40
CSI = re.compile(rb"\x1b\[([0-9;?]*)([A-Za-z])")


class Screen:
    def __init__(self):
        self.rows = [[]]
        self.row = 0
        self.col = 0

    def _line(self):
        while len(self.rows) <= self.row:
            self.rows.append([])
        return self.rows[self.row]

    def put(self, char):
        if self.col >= COLUMNS:  # autowrap
            self.row, self.col = self.row + 1, 0
        line = self._line()
        while len(line) < self.col:
            line.append(" ")
        if self.col < len(line):
            line[self.col] = char
        else:
            line.append(char)
        self.col += 1

    def control(self, params, final):
        count = int(params) if params.isdigit() else 1
        if final == "A":
            self.row = max(0, self.row - count)
        elif final == "B":
            self.row += count
        elif final == "C":
            self.col = min(COLUMNS - 1, self.col + count)
        elif final == "D":
            self.col = max(0, self.col - count)
        elif final == "K" and params in ("", "0"):
            del self._line()[self.col:]
        elif final == "J" and params in ("", "0"):
            del self._line()[self.col:]
            del self.rows[self.row + 1:]

    def feed(self, data):
        text_start = 0
        for match in CSI.finditer(data):
            self.text(data[text_start:match.start()])
            self.control(match.group(1).decode(), match.group(2).decode())
            text_start = match.end()
        self.text(data[text_start:])

    def text(self, data):
        for char in data.decode("utf-8", "replace"):
            if char == "\r":
                self.col = 0
            elif char == "\n":
                self.row += 1
                self._line()
            elif char == "\b":
                self.col = max(0, self.col - 1)
            elif char >= " ":
                self.put(char)

    def lines(self):
        return ["".join(line).rstrip() for line in self.rows]


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    fd, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.close(fd)
        os.setsid()
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
        for target in range(3):
            os.dup2(terminal, target)
        os.execvp(sys.argv[3], sys.argv[3:])
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    screen = Screen()
    screen.feed(output)
    with open(sys.argv[1], "w") as out:
        out.write("\n".join(screen.lines()).rstrip("\n") + "\n")
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status)
             else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
