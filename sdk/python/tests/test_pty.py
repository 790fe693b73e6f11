import asyncio
import threading
import time

import pytest

from warren import AsyncSandbox, Sandbox


class Screen:
    """Collects a terminal's display; expect() waits for text after the last match."""

    def __init__(self):
        self.buf = bytearray()
        self.mark = 0
        self.lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self.lock:
            self.buf.extend(data)

    def expect(self, want: str, timeout: float = 10.0) -> None:
        w = want.encode()
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                i = self.buf.find(w, self.mark)
                if i >= 0:
                    self.mark = i + len(w)
                    return
            time.sleep(0.02)
        raise AssertionError(f"terminal never showed {want!r}; it has {bytes(self.buf[self.mark:])!r}")


def test_pty_sync(tenant):
    sb = Sandbox.create(envs={"PS1": "$ "})
    pty = sb.pty.create(80, 24)
    scr = Screen()
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("r", pty.wait(on_data=scr.feed)))
    t.start()
    scr.expect("$ ")
    pty.send_input("stty size\r")
    scr.expect("24 80\r\n")
    pty.resize(100, 40)
    pty.send_input("stty size; [ -t 1 ] && echo tty\r")
    scr.expect("40 100\r\ntty\r\n")
    pty.send_input("sleep 100\r")
    scr.expect("sleep 100\r\n")
    time.sleep(0.1)
    pty.send_input(b"\x03")
    scr.expect("^C")
    pty.send_input("echo status=$?\r")
    scr.expect("status=130\r\n")
    pty.send_input("exit 3\r")
    t.join(10)
    assert result["r"].exit_code == 3


@pytest.mark.asyncio
async def test_pty_async(tenant):
    sb = await AsyncSandbox.create()
    pty = await sb.pty.create(33, 11, cmd="[ -t 0 ] && stty size")
    r = await pty.wait()
    assert (r.exit_code, r.stdout) == (0, "11 33\r\n")
    slow = await sb.pty.create(80, 24, cmd="sleep 5", timeout=0.3)
    assert (await slow.wait()).exit_code == 124
    sh = await sb.pty.create(80, 24)
    await asyncio.sleep(0.1)
    await sh.kill()
    r = await sh.wait()
    assert r.limit == "signal:HUP"
    await sb.close()
