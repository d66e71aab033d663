//! Slurm hostlists: `gpu-[001-004,006]` from a set of hostnames, and back.
//!
//! Names group by their prefix and the width of their trailing number, as
//! Slurm does; numbers keep their zero padding; groups are printed in the
//! order their first host appears.

use crate::limits::{MAX_HOSTLIST_BYTES, MAX_HOSTLIST_NAMES};

/// Splits `gpu-007` into (`gpu-`, 7, 3). Names without a trailing number
/// have no numeric part.
fn split(name: &str) -> (&str, Option<(u64, usize)>) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 18 {
        return (name, None);
    }
    let (prefix, number) = name.split_at(name.len() - digits);
    match number.parse::<u64>() {
        Ok(value) => (prefix, Some((value, digits))),
        Err(_) => (name, None),
    }
}

/// Compresses hostnames into Slurm's bracketed form, e.g.
/// `["c002", "c003", "c005"]` -> `c[002-003,005]`.
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    // (prefix, width) -> numbers, in order of first appearance.
    let mut groups: Vec<(String, usize, Vec<u64>)> = Vec::new();
    let mut plain: Vec<(usize, String)> = Vec::new();
    let mut order: Vec<(usize, bool)> = Vec::new();
    for name in names {
        let name = name.as_ref();
        match split(name) {
            (prefix, Some((value, digits))) => {
                // Zero-padded numbers keep their width; unpadded ones join a
                // padded group of their own length (`n[08-10]`) or the
                // unpadded group (`n[1-2,10]`).
                let padded = digits > 1 && name.as_bytes()[name.len() - digits] == b'0';
                let width = if padded { digits } else { 0 };
                let fits = |p: &String, w: usize| p == prefix && (w == width || (!padded && w == digits));
                match groups.iter_mut().position(|(p, w, _)| fits(p, *w)) {
                    Some(index) => groups[index].2.push(value),
                    None => {
                        groups.push((prefix.to_string(), width, vec![value]));
                        order.push((groups.len() - 1, true));
                    }
                }
            }
            (_, None) => {
                plain.push((plain.len(), name.to_string()));
                order.push((plain.len() - 1, false));
            }
        }
    }
    let mut parts = Vec::new();
    for (index, numbered) in order {
        if !numbered {
            parts.push(plain[index].1.clone());
            continue;
        }
        let (prefix, width, numbers) = &mut groups[index];
        crate::sort::sort(numbers);
        numbers.dedup();
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for &n in numbers.iter() {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == n => *end = n,
                _ => ranges.push((n, n)),
            }
        }
        let w = *width;
        let body: Vec<String> =
            ranges.iter().map(|&(start, end)| if start == end { format!("{start:0w$}") } else { format!("{start:0w$}-{end:0w$}") }).collect();
        if numbers.len() == 1 {
            parts.push(format!("{prefix}{}", body.join(",")));
        } else {
            parts.push(format!("{prefix}[{}]", body.join(",")));
        }
    }
    parts.join(",")
}

/// Expands a hostlist (`c[002,004-005],d01`) into names. Malformed text
/// gives None, and so does a list of more than [`MAX_HOSTLIST_NAMES`]
/// names or [`MAX_HOSTLIST_BYTES`] of them: the count is checked before any
/// name is made, so no range can exhaust memory.
pub fn expand(list: &str) -> Option<Vec<String>> {
    let limit = MAX_HOSTLIST_NAMES as u64;
    let mut names = Vec::new();
    let mut bytes = 0usize;
    let mut rest = list;
    while !rest.is_empty() {
        // One item ends at a comma outside brackets.
        let mut depth = 0;
        let mut end = rest.len();
        for (at, c) in rest.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    end = at;
                    break;
                }
                _ => {}
            }
        }
        let item = &rest[..end];
        rest = rest.get(end + 1..).unwrap_or("");
        match item.split_once('[') {
            None => {
                if names.len() as u64 >= limit {
                    return None;
                }
                bytes = bytes.checked_add(item.len())?;
                names.push(item.to_string());
            }
            Some((prefix, tail)) => {
                let (inner, suffix) = tail.split_once(']')?;
                for range in inner.split(',') {
                    let (start, stop) = range.split_once('-').unwrap_or((range, range));
                    let width = start.len();
                    let (start, stop): (u64, u64) = (start.parse().ok()?, stop.parse().ok()?);
                    let count = stop.checked_sub(start)?.checked_add(1)?;
                    if (names.len() as u64).checked_add(count)? > limit {
                        return None;
                    }
                    let longest = prefix.len() + suffix.len() + width.max(stop.to_string().len());
                    bytes = bytes.checked_add(longest.checked_mul(count as usize)?)?;
                    if bytes > MAX_HOSTLIST_BYTES {
                        return None;
                    }
                    for n in start..=stop {
                        names.push(format!("{prefix}{n:0width$}{suffix}"));
                    }
                }
            }
        }
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_like_slurm() {
        assert_eq!(compress(&["gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-006"]), "gpu-[001-004,006]");
        assert_eq!(compress(&["gpu-001"]), "gpu-001");
        assert_eq!(compress(&["f005"]), "f005");
        assert_eq!(compress(&["d001", "d002", "f001"]), "d[001-002],f001");
        assert_eq!(compress(&["login", "n1", "n2", "n10"]), "login,n[1-2,10]");
        assert_eq!(compress::<&str>(&[]), "");
        assert_eq!(compress(&["n08", "n09", "n10"]), "n[08-10]");
    }

    #[test]
    fn expands_and_round_trips() {
        let names = expand("c[002,004,008-010]").unwrap();
        assert_eq!(names, ["c002", "c004", "c008", "c009", "c010"]);
        assert_eq!(compress(&names), "c[002,004,008-010]");
        assert_eq!(expand("a,b[1-2]").unwrap(), ["a", "b1", "b2"]);
        assert!(expand("c[3-1]").is_none());
        assert!(expand("c[1-99999999]").is_none());
        assert!(expand("c[x]").is_none());
        // Ranges that would wrap, or hold more names than any lab has, are refused unbuilt.
        assert!(expand("a,b[0-18446744073709551615]").is_none());
        assert!(expand("b[18446744073709551615-18446744073709551615]").unwrap().len() == 1);
        assert!(expand("g[1-65537]").is_none());
        assert!(expand(&format!("{}[1-65000]", "x".repeat(100))).is_none(), "too many bytes");
    }
}
