//! A minimal PNG writer: 8-bit RGB, no filter, one zlib stream (flate2), CRCs by flate2.

use std::io::Write;

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&u32::try_from(data.len()).expect("a chunk fits in 4 GiB").to_be_bytes());
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// `rgb` is `width * height` pixels of 3 bytes, rows top to bottom.
pub(crate) fn encode(rgb: &[u8], width: usize, height: usize) -> Vec<u8> {
    let mut raw = Vec::with_capacity(height * (width * 3 + 1));
    for row in rgb.chunks(width * 3) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
    zlib.write_all(&raw).expect("writing to a Vec cannot fail");
    let compressed = zlib.finish().expect("writing to a Vec cannot fail");
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&u32::try_from(width).expect("width fits").to_be_bytes());
    header.extend_from_slice(&u32::try_from(height).expect("height fits").to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &compressed);
    chunk(&mut out, b"IEND", &[]);
    out
}
