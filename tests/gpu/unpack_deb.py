"""unpack_deb.py DEB DIR: unpacks a Debian package's files into DIR, as dpkg -x does, for
machines without dpkg (tests/gpu/device_checks.sh). A .deb is an ar archive whose
data.tar.* member holds the files."""

import io
import sys
import tarfile


def members(path):
    with open(path, "rb") as file:
        if file.read(8) != b"!<arch>\n":
            raise SystemExit(f"unpack_deb.py: {path}: not a Debian package")
        while True:
            header = file.read(60)
            if len(header) < 60:
                return
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58])
            data = file.read(size)
            if size % 2:
                file.read(1)
            yield name, data


def main():
    deb, target = sys.argv[1], sys.argv[2]
    for name, data in members(deb):
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                archive.extractall(target)
            return
    raise SystemExit(f"unpack_deb.py: {deb}: no data.tar member")


if __name__ == "__main__":
    main()
