//! QR codes (ISO/IEC 18004, model 2) for the links a room projects: byte
//! mode, error correction level M (a projected code photographed from the
//! back of a room loses some modules), the smallest version that holds the
//! text, and the mask with the lowest penalty. Pure and bounded: a text
//! longer than version 40 holds is refused, never truncated.

/// Error correction codewords per block at level M, by version (index 0 unused).
const ECC_PER_BLOCK: [u8; 41] = [
    0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    28, 28,
];
/// Error correction blocks at level M, by version.
const BLOCKS: [u8; 41] =
    [0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49];
/// Level M's two format bits.
const LEVEL_M: u32 = 0b00;

/// A square of modules, dark or light, without its quiet zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QrCode {
    pub version: u8,
    pub size: usize,
    modules: Vec<bool>,
}

impl QrCode {
    /// The code for `text`, or None when version 40 cannot hold it.
    pub fn encode(text: &str) -> Option<QrCode> {
        let bytes = text.as_bytes();
        let version = (1..=40u8).find(|&v| data_bits_needed(v, bytes.len()) <= data_codewords(v) * 8)?;
        let data = data_codewords_for(version, bytes);
        let codewords = with_error_correction(version, &data);
        let mut code = Canvas::new(version);
        code.draw_function_patterns();
        code.draw_codewords(&codewords);
        let mask = (0..8u8)
            .min_by_key(|&mask| {
                let mut trial = code.clone();
                trial.apply_mask(mask);
                trial.draw_format(mask);
                trial.penalty()
            })
            .unwrap_or(0);
        code.apply_mask(mask);
        code.draw_format(mask);
        Some(QrCode { version, size: code.size, modules: code.modules })
    }

    pub fn dark(&self, x: usize, y: usize) -> bool {
        x < self.size && y < self.size && self.modules[y * self.size + x]
    }

    /// An SVG path of the dark modules, one unit each, offset by a quiet zone
    /// of `quiet` modules: runs along a row are one rectangle.
    pub fn svg_path(&self, quiet: usize) -> String {
        let mut path = String::new();
        for y in 0..self.size {
            let mut x = 0;
            while x < self.size {
                if self.dark(x, y) {
                    let start = x;
                    while x < self.size && self.dark(x, y) {
                        x += 1;
                    }
                    path += &format!("M{} {}h{}v1h-{}z", start + quiet, y + quiet, x - start, x - start);
                } else {
                    x += 1;
                }
            }
        }
        path
    }
}

fn size_of(version: u8) -> usize {
    usize::from(version) * 4 + 17
}

fn alignment_positions(version: u8) -> Vec<usize> {
    if version == 1 {
        return Vec::new();
    }
    let count = usize::from(version) / 7 + 2;
    let size = size_of(version);
    let step = if version == 32 { 26 } else { (usize::from(version) * 4 + count * 2 + 1) / (count * 2 - 2) * 2 };
    let mut positions: Vec<usize> = (0..count - 1).map(|i| size - 7 - i * step).collect();
    positions.push(6);
    positions.reverse();
    positions
}

/// Modules left for data and error correction once the function patterns are drawn.
fn raw_modules(version: u8) -> usize {
    let v = usize::from(version);
    let mut modules = (16 * v + 128) * v + 64;
    if version >= 2 {
        let count = v / 7 + 2;
        modules -= (25 * count - 10) * count - 55;
        if version >= 7 {
            modules -= 36;
        }
    }
    modules
}

fn data_codewords(version: u8) -> usize {
    raw_modules(version) / 8 - usize::from(ECC_PER_BLOCK[usize::from(version)]) * usize::from(BLOCKS[usize::from(version)])
}

fn data_bits_needed(version: u8, bytes: usize) -> usize {
    4 + if version < 10 { 8 } else { 16 } + bytes * 8
}

/// Mode, count, the bytes, the terminator and the pad codewords.
fn data_codewords_for(version: u8, bytes: &[u8]) -> Vec<u8> {
    let mut bits: Vec<bool> = Vec::new();
    let mut push = |value: usize, count: usize| (0..count).rev().for_each(|i| bits.push((value >> i) & 1 == 1));
    push(0b0100, 4);
    push(bytes.len(), if version < 10 { 8 } else { 16 });
    bytes.iter().for_each(|&byte| push(usize::from(byte), 8));
    let capacity = data_codewords(version) * 8;
    let terminator = (capacity - bits.len()).min(4);
    bits.extend(std::iter::repeat_n(false, terminator));
    while bits.len() % 8 != 0 {
        bits.push(false);
    }
    let mut out: Vec<u8> = bits.chunks(8).map(|byte| byte.iter().fold(0u8, |acc, &bit| (acc << 1) | u8::from(bit))).collect();
    for pad in [0xEC, 0x11].into_iter().cycle() {
        if out.len() >= data_codewords(version) {
            break;
        }
        out.push(pad);
    }
    out
}

fn gf_multiply(x: u8, y: u8) -> u8 {
    // Russian-peasant multiplication modulo x^8 + x^4 + x^3 + x^2 + 1.
    let mut product: u16 = 0;
    for i in (0..8).rev() {
        product = (product << 1) ^ ((product >> 7) * 0x11D);
        product ^= u16::from((y >> i) & 1) * u16::from(x);
    }
    product as u8
}

/// The generator polynomial of degree `degree`, leading term dropped.
fn generator(degree: usize) -> Vec<u8> {
    let mut result = vec![0u8; degree];
    result[degree - 1] = 1;
    let mut root = 1u8;
    for _ in 0..degree {
        for j in 0..degree {
            result[j] = gf_multiply(result[j], root);
            if j + 1 < degree {
                result[j] ^= result[j + 1];
            }
        }
        root = gf_multiply(root, 0x02);
    }
    result
}

fn remainder(data: &[u8], divisor: &[u8]) -> Vec<u8> {
    let mut result = vec![0u8; divisor.len()];
    for &byte in data {
        let factor = byte ^ result.remove(0);
        result.push(0);
        for (term, &coefficient) in result.iter_mut().zip(divisor) {
            *term ^= gf_multiply(coefficient, factor);
        }
    }
    result
}

/// The data split into blocks, each followed by its error correction, and
/// the blocks interleaved codeword by codeword.
fn with_error_correction(version: u8, data: &[u8]) -> Vec<u8> {
    let blocks = usize::from(BLOCKS[usize::from(version)]);
    let ecc = usize::from(ECC_PER_BLOCK[usize::from(version)]);
    let raw = raw_modules(version) / 8;
    let short_blocks = blocks - raw % blocks;
    let short_length = raw / blocks;
    let divisor = generator(ecc);
    // Every block is made as long as a long one: a short block holds a
    // placeholder where the long ones have their last data codeword, which
    // the interleaving skips.
    let mut split = Vec::with_capacity(blocks);
    let mut at = 0;
    for block in 0..blocks {
        let short = block < short_blocks;
        let length = short_length - ecc + usize::from(!short);
        let part = &data[at..at + length];
        at += length;
        let mut whole = part.to_vec();
        if short {
            whole.push(0);
        }
        whole.extend(remainder(part, &divisor));
        split.push(whole);
    }
    let mut out = Vec::with_capacity(raw);
    for i in 0..=short_length {
        for (block, codewords) in split.iter().enumerate() {
            if i != short_length - ecc || block >= short_blocks {
                out.push(codewords[i]);
            }
        }
    }
    out
}

#[derive(Clone)]
struct Canvas {
    version: u8,
    size: usize,
    modules: Vec<bool>,
    function: Vec<bool>,
}

impl Canvas {
    fn new(version: u8) -> Canvas {
        let size = size_of(version);
        Canvas { version, size, modules: vec![false; size * size], function: vec![false; size * size] }
    }

    fn set(&mut self, x: usize, y: usize, dark: bool) {
        self.modules[y * self.size + x] = dark;
        self.function[y * self.size + x] = true;
    }

    fn draw_function_patterns(&mut self) {
        let size = self.size;
        for i in 0..size {
            self.set(6, i, i % 2 == 0);
            self.set(i, 6, i % 2 == 0);
        }
        self.draw_finder(3, 3);
        self.draw_finder(size - 4, 3);
        self.draw_finder(3, size - 4);
        let positions = alignment_positions(self.version);
        let last = positions.len().saturating_sub(1);
        for (i, &x) in positions.iter().enumerate() {
            for (j, &y) in positions.iter().enumerate() {
                // The three corners with a finder pattern take no alignment pattern.
                let corner = (i == 0 && (j == 0 || j == last)) || (i == last && j == 0);
                if !corner {
                    self.draw_alignment(x, y);
                }
            }
        }
        // Reserve the format areas (drawn for real once a mask is chosen).
        self.draw_format(0);
        self.draw_version();
    }

    fn draw_finder(&mut self, cx: usize, cy: usize) {
        for dy in -4i32..=4 {
            for dx in -4i32..=4 {
                let (x, y) = (cx as i32 + dx, cy as i32 + dy);
                if (0..self.size as i32).contains(&x) && (0..self.size as i32).contains(&y) {
                    let distance = dx.abs().max(dy.abs());
                    self.set(x as usize, y as usize, distance != 2 && distance != 4);
                }
            }
        }
    }

    fn draw_alignment(&mut self, cx: usize, cy: usize) {
        for dy in -2i32..=2 {
            for dx in -2i32..=2 {
                self.set((cx as i32 + dx) as usize, (cy as i32 + dy) as usize, dx.abs().max(dy.abs()) != 1);
            }
        }
    }

    fn draw_format(&mut self, mask: u8) {
        let data = (LEVEL_M << 3) | u32::from(mask);
        let mut remainder = data;
        for _ in 0..10 {
            remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537);
        }
        let bits = ((data << 10) | remainder) ^ 0x5412;
        let bit = |i: u32| (bits >> i) & 1 == 1;
        let size = self.size;
        for i in 0..6 {
            self.set(8, i as usize, bit(i));
        }
        self.set(8, 7, bit(6));
        self.set(8, 8, bit(7));
        self.set(7, 8, bit(8));
        for i in 9..15 {
            self.set(14 - i as usize, 8, bit(i));
        }
        for i in 0..8 {
            self.set(size - 1 - i as usize, 8, bit(i));
        }
        for i in 8..15 {
            self.set(8, size - 15 + i as usize, bit(i));
        }
        self.set(8, size - 8, true);
    }

    fn draw_version(&mut self) {
        if self.version < 7 {
            return;
        }
        let version = u32::from(self.version);
        let mut remainder = version;
        for _ in 0..12 {
            remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25);
        }
        let bits = (version << 12) | remainder;
        for i in 0..18usize {
            let dark = (bits >> i) & 1 == 1;
            let (a, b) = (self.size - 11 + i % 3, i / 3);
            self.set(a, b, dark);
            self.set(b, a, dark);
        }
    }

    /// The codewords' bits in the zigzag of column pairs from the bottom right.
    fn draw_codewords(&mut self, codewords: &[u8]) {
        let size = self.size;
        let mut index = 0;
        let mut right = size - 1;
        loop {
            if right == 6 {
                right = 5;
            }
            for vertical in 0..size {
                for j in 0..2 {
                    let x = right - j;
                    let upward = (right + 1) & 2 == 0;
                    let y = if upward { size - 1 - vertical } else { vertical };
                    if !self.function[y * size + x] && index < codewords.len() * 8 {
                        self.modules[y * size + x] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1;
                        index += 1;
                    }
                }
            }
            if right < 2 {
                break;
            }
            right -= 2;
        }
    }

    fn apply_mask(&mut self, mask: u8) {
        for y in 0..self.size {
            for x in 0..self.size {
                let flip = match mask {
                    0 => (x + y) % 2 == 0,
                    1 => y % 2 == 0,
                    2 => x % 3 == 0,
                    3 => (x + y) % 3 == 0,
                    4 => (x / 3 + y / 2) % 2 == 0,
                    5 => x * y % 2 + x * y % 3 == 0,
                    6 => (x * y % 2 + x * y % 3) % 2 == 0,
                    _ => ((x + y) % 2 + x * y % 3) % 2 == 0,
                };
                let at = y * self.size + x;
                if flip && !self.function[at] {
                    self.modules[at] = !self.modules[at];
                }
            }
        }
    }

    /// The standard's penalty: long runs, 2x2 blocks, finder-like patterns
    /// and an unbalanced share of dark modules.
    fn penalty(&self) -> usize {
        let size = self.size;
        let at = |x: usize, y: usize| self.modules[y * size + x];
        let mut penalty = 0;
        for transpose in [false, true] {
            for a in 0..size {
                let line: Vec<bool> = (0..size).map(|b| if transpose { at(a, b) } else { at(b, a) }).collect();
                let mut run = 1;
                for i in 1..=size {
                    if i < size && line[i] == line[i - 1] {
                        run += 1;
                    } else {
                        if run >= 5 {
                            penalty += run - 2;
                        }
                        run = 1;
                    }
                }
                let pattern = [true, false, true, true, true, false, true];
                for start in 0..size.saturating_sub(6) {
                    if line[start..start + 7] == pattern {
                        let light = |range: std::ops::Range<usize>| range.clone().all(|i| i >= size || !line[i]);
                        let before = start < 4 || light(start - 4..start);
                        let after = light(start + 7..start + 11);
                        if before || after {
                            penalty += 40;
                        }
                    }
                }
            }
        }
        for y in 0..size - 1 {
            for x in 0..size - 1 {
                let colour = at(x, y);
                if colour == at(x + 1, y) && colour == at(x, y + 1) && colour == at(x + 1, y + 1) {
                    penalty += 3;
                }
            }
        }
        let total = size * size;
        let dark = self.modules.iter().filter(|&&dark| dark).count();
        // Each 5% step away from half dark costs 10.
        let k = (dark * 20).abs_diff(total * 10).div_ceil(total).saturating_sub(1);
        penalty + k * 10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_are_the_standards() {
        // Data codewords at level M (ISO/IEC 18004 table 7).
        let expected = [(1, 16), (2, 28), (5, 86), (7, 124), (10, 216), (20, 669), (27, 1128), (40, 2334)];
        for (version, codewords) in expected {
            assert_eq!(data_codewords(version), codewords, "version {version}");
        }
        assert_eq!(raw_modules(1), 208);
        assert_eq!(raw_modules(40), 29648);
        assert_eq!(alignment_positions(7), vec![6, 22, 38]);
        assert_eq!(alignment_positions(32), vec![6, 34, 60, 86, 112, 138]);
    }

    #[test]
    fn error_correction_of_a_known_message() {
        // "HELLO WORLD" in alphanumeric mode at 1-M, the standard's worked
        // example: its ten error correction codewords.
        let data = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17];
        assert_eq!(remainder(&data, &generator(10)), vec![196, 35, 39, 119, 235, 215, 231, 226, 93, 23]);
    }

    #[test]
    fn the_smallest_version_that_holds_the_text_and_nothing_beyond_40() {
        assert_eq!(QrCode::encode("https://example.org").map(|code| (code.version, code.size)), Some((2, 25)));
        let link = format!(
            "https://labs.example.org/#/?room=https%3A%2F%2Flrs.example.org%2FxAPI%2F&token=Basic%20{}&registration={}",
            "A".repeat(40),
            "b".repeat(36)
        );
        let code = QrCode::encode(&link).unwrap();
        assert!(code.version >= 7 && code.version <= 10, "{}", code.version);
        assert!(QrCode::encode(&"x".repeat(2331)).is_some());
        assert!(QrCode::encode(&"x".repeat(2332)).is_none());
    }

    #[test]
    fn finders_timing_and_the_dark_module_are_in_place() {
        let code = QrCode::encode("ClusterLab").unwrap();
        let size = code.size;
        for (x, y) in [(0, 0), (size - 7, 0), (0, size - 7)] {
            assert!(code.dark(x, y) && code.dark(x + 6, y + 6) && !code.dark(x + 1, y + 1) && code.dark(x + 3, y + 3));
        }
        assert!((8..size - 8).all(|i| code.dark(i, 6) == (i % 2 == 0) && code.dark(6, i) == (i % 2 == 0)));
        assert!(code.dark(8, size - 8));
        // The two copies of the format bits agree.
        let first: Vec<bool> = (0..6).map(|i| code.dark(8, i)).collect();
        let second: Vec<bool> = (0..6).map(|i| code.dark(size - 1 - i, 8)).collect();
        assert_eq!(first, second);
        assert!(code.svg_path(4).starts_with("M4 4h7v1h-7z"));
    }
}
