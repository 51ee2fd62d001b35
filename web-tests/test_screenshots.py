"""Screenshots of every page at both sizes, from realistic data: into a temporary directory, or
into docs/screenshots when HANSON_SCREENSHOTS=1."""

from __future__ import annotations

import os
import struct

import screenshots
from hanson_web import Server, World


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_screenshots_of_every_page(browser, tmp_path):
    out_dir = screenshots.DEFAULT_OUT if os.environ.get("HANSON_SCREENSHOTS") == "1" else str(tmp_path)
    server = Server().start()
    try:
        seeded = screenshots.seed(World.create(server))
        errors = []
        written = screenshots.shoot(browser, server.base, seeded, out_dir, errors)
    finally:
        server.stop()
    assert sorted(os.path.basename(p) for p in written) == sorted(
        [f"{page}-{size}.png" for page in screenshots.PAGES for size in screenshots.SIZES]
        + [f"embed-{theme}.png" for theme in screenshots.EMBED_THEMES])
    for path in written:
        size = "mobile" if path.endswith("-mobile.png") else "desktop"
        viewport = screenshots.EMBED_SIZE if "/embed-" in path else screenshots.SIZES[size]
        assert png_size(path) == (viewport["width"], viewport["height"]), path
        assert os.path.getsize(path) > 10_000, f"{path} looks empty"
    assert not errors, "console errors:\n" + "\n".join(errors)
    assert not server.errors_logged(), server.errors_logged()
    server.remove()
