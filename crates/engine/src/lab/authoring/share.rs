//! A lab file as a link, with no server: the file deflated (raw DEFLATE,
//! level 9) and written in URL-safe base64 after a format tag, so the
//! fragment reads `#/shared/1.<data>`. Decoding is bounded before it
//! starts: the link's length ([`MAX_SHARED_LINK_CHARS`]) and the inflated
//! size ([`MAX_LAB_BYTES`]), so a crafted link cannot exhaust memory.

use crate::limits::{MAX_LAB_BYTES, MAX_SHARED_LINK_CHARS};

/// The format tag of today's links; a link with another was made by
/// another ClusterLab.
const FORMAT: &str = "1.";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The link data (what follows `#/shared/`) for a lab file, or why it is
/// too large to share as a link.
pub fn encode(source: &str) -> Result<String, String> {
    let link = tagged(&miniz_oxide::deflate::compress_to_vec(source.as_bytes(), 9));
    if link.len() > MAX_SHARED_LINK_CHARS {
        return Err(too_long(link.len()));
    }
    Ok(link)
}

/// The format tag, then `packed` in URL-safe base64 without padding.
fn tagged(packed: &[u8]) -> String {
    let mut link = String::with_capacity(FORMAT.len() + packed.len().div_ceil(3) * 4);
    link.push_str(FORMAT);
    for chunk in packed.chunks(3) {
        let bits = chunk.iter().enumerate().fold(0u32, |bits, (at, byte)| bits | u32::from(*byte) << (16 - 8 * at));
        for at in 0..=chunk.len() {
            link.push(char::from(ALPHABET[(bits >> (18 - 6 * at) & 63) as usize]));
        }
    }
    link
}

fn too_long(chars: usize) -> String {
    format!(
        "a shared link holds at most {MAX_SHARED_LINK_CHARS} characters after #/shared/ (a lab file of about 25 KB); this one needs {chars}. Export the lab as a .toml file and share the file instead."
    )
}

/// The lab file a link's data (what follows `#/shared/`) carries.
pub fn decode(link: &str) -> Result<String, String> {
    if link.len() > MAX_SHARED_LINK_CHARS {
        return Err(too_long(link.len()));
    }
    let Some(data) = link.strip_prefix(FORMAT) else {
        return Err("this link was not made by this version of ClusterLab (its format is unknown), or it was cut short".to_string());
    };
    let mut packed = Vec::with_capacity(data.len() / 4 * 3 + 2);
    let (mut bits, mut held) = (0u32, 0u32);
    for byte in data.bytes() {
        let Some(value) = ALPHABET.iter().position(|letter| *letter == byte) else {
            return Err("this link is damaged: it has characters a shared link never has (was it cut or rewrapped?)".to_string());
        };
        bits = bits << 6 | value as u32;
        held += 6;
        if held >= 8 {
            held -= 8;
            packed.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    let text = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_LAB_BYTES).map_err(|error| match error.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!("this link holds a lab file over the {} MiB a lab may have", MAX_LAB_BYTES >> 20),
        _ => "this link is damaged: its data does not unpack (was it cut short?)".to_string(),
    })?;
    String::from_utf8(text).map_err(|_| "this link is damaged: the lab it holds is not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TWO_NODE_LAB;

    #[test]
    fn a_lab_survives_the_round_trip_in_url_safe_characters() {
        for source in [TWO_NODE_LAB, "", "a", "ab", "abc", "é\u{1F600}\n"] {
            let link = encode(source).unwrap();
            assert!(link[2..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{link}");
            assert_eq!(decode(&link).unwrap(), source);
        }
        // A real lab file's link is well under its size.
        let lab = include_str!("../../../../../labs/slow-rail.toml");
        assert!(encode(lab).unwrap().len() < lab.len() * 2 / 3, "{}", encode(lab).unwrap().len());
    }

    #[test]
    fn long_damaged_and_foreign_links_are_refused_with_a_reason() {
        let mut rng = crate::rng::Rng::derive(7, &["share"]);
        let noise: String = (0..120_000).map(|_| char::from(b'a' + (rng.next_u64() % 26) as u8)).collect();
        assert!(encode(&noise).unwrap_err().contains(&format!("at most {MAX_SHARED_LINK_CHARS} characters")));
        assert!(decode(&"A".repeat(MAX_SHARED_LINK_CHARS + 1)).unwrap_err().contains(&format!("at most {MAX_SHARED_LINK_CHARS} characters")));
        assert!(decode("2.AAAA").unwrap_err().contains("format is unknown"));
        assert!(decode("1.ab+c").unwrap_err().contains("characters a shared link never has"));
        let link = encode(TWO_NODE_LAB).unwrap();
        assert!(decode(&link[..link.len() / 2]).unwrap_err().contains("does not unpack"));
    }

    #[test]
    fn a_link_that_inflates_past_the_lab_limit_is_refused() {
        // 4 MiB of zeros deflates to 4 KB: a bomb must stop at the limit.
        let link = tagged(&miniz_oxide::deflate::compress_to_vec(&vec![0u8; 4 << 20], 9));
        assert!(link.len() <= MAX_SHARED_LINK_CHARS, "{}", link.len());
        assert!(decode(&link).unwrap_err().contains("over the 1 MiB"));
    }
}
