"""scripts/screen-session.py's pure parts: the H.264 depacketizer the still picture is decoded
through, bench-sink.py's record format, the CPU accounting over a process tree, and the converged
seconds of the report.

Run: out/venv/bin/python -m unittest discover -s scripts/tests (make test does).
"""

import importlib.util
import os
import struct
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    "screen_session", os.path.join(os.path.dirname(HERE), "screen-session.py")
)
session = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(session)

START = b"\0\0\0\1"


def rtp(payload, seq, marker=False, csrcs=0, extension=None, padding=0):
    first = 0x80 | csrcs | (0x10 if extension is not None else 0) | (0x20 if padding else 0)
    packet = struct.pack("!BBHII", first, (0x80 if marker else 0) | 96, seq, 1000, 0x1234) + b"\0\0\0\7" * csrcs
    if extension is not None:
        packet += struct.pack("!HH", 0xBEDE, len(extension) // 4) + extension
    packet += payload
    if padding:
        packet += b"\0" * (padding - 1) + bytes([padding])
    return packet


class AnnexBTests(unittest.TestCase):
    def test_single_nal_units_stap_a_and_fu_a_make_one_access_unit(self):
        sps, pps = b"\x67\x42\xc0\x1f", b"\x68\xce\x3c\x80"
        idr = b"\x65" + bytes(range(40))
        stap = b"\x18" + struct.pack("!H", len(sps)) + sps + struct.pack("!H", len(pps)) + pps
        fu_indicator = (idr[0] & 0xE0) | 28
        fragments = [
            bytes([fu_indicator, 0x80 | 5]) + idr[1:15],
            bytes([fu_indicator, 5]) + idr[15:30],
            bytes([fu_indicator, 0x40 | 5]) + idr[30:],
        ]
        packets = [rtp(stap, 1, csrcs=1, extension=b"\x10\xaa\0\0")]
        packets += [rtp(f, 2 + i, marker=i == 2, padding=4 if i == 1 else 0) for i, f in enumerate(fragments)]
        stream, units = session.annex_b(packets)
        self.assertEqual(units, 1)
        self.assertEqual(stream, START + sps + START + pps + START + idr)

    def test_an_access_unit_without_its_last_packet_is_left_out(self):
        whole = rtp(b"\x41\x9a\x01", 1, marker=True)
        cut = rtp(b"\x7c\x81\x02\x03", 2)  # FU-A start of a P slice, its end never came
        stream, units = session.annex_b([whole, cut])
        self.assertEqual(units, 1)
        self.assertEqual(stream, START + b"\x41\x9a\x01")


class RecordTests(unittest.TestCase):
    def test_reads_what_bench_sink_writes(self):
        with tempfile.NamedTemporaryFile(delete=False) as file:
            for at, port, data in ((1.5, 25304, b"abc"), (2.25, 25305, b""), (3.0, 25304, b"\x80\xe0xyz")):
                file.write(struct.pack("<dHH", at, port, len(data)) + data)
        try:
            self.assertEqual(
                session.read_record(file.name), [(1.5, 25304, b"abc"), (2.25, 25305, b""), (3.0, 25304, b"\x80\xe0xyz")]
            )
        finally:
            os.unlink(file.name)


class AccountingTests(unittest.TestCase):
    def test_a_process_that_appears_counts_from_zero_and_none_goes_negative(self):
        before = {10: 100, 11: 50}
        after = {10: 130, 11: 40, 12: 7}  # 11 was replaced by another process with the same pid
        self.assertEqual(session.ticks_between(before, after), 30 + 0 + 7)

    def test_this_process_is_in_its_own_tree(self):
        ticks = session.tree_ticks(os.getpid())
        self.assertIn(os.getpid(), ticks)


class QuietSecondsTests(unittest.TestCase):
    def test_splits_the_converged_seconds_at_the_target(self):
        row = {
            "stillSeconds": [
                {"second": 0, "kbps": 1400.0, "cpuPercent": 11.0},
                {"second": 1, "kbps": 0.5, "cpuPercent": 2.0},
                {"second": 2, "kbps": 900.0, "cpuPercent": 20.0},
                {"second": 3, "kbps": 0.7, "cpuPercent": 1.0},
            ],
            "quietFromSecond": 3,
        }
        text = session.quiet_seconds(row)
        self.assertIn("Of the converged part's 3 whole seconds, 2 stayed within 10 kbit/s", text)
        self.assertIn("mean 0.60 kbit/s, 1.5 % of a core", text)
        self.assertIn("the other 1 (seconds 2) carried 112 kB at 20.0 %", text)
        self.assertIn("every second from second 3 on", text)


if __name__ == "__main__":
    unittest.main()
