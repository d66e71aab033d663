//! The engine's bounds, in one place. Everything a trainee or an author
//! controls is bounded here, so that no input can hang the page or exhaust
//! its memory; where a real tool has its own limit and message, the tool
//! uses that instead.

/// How deep command lines may run each other: `ssh` running `pdsh` running
/// `watch` running `sudo env srun ...`. Real systems have no single limit
/// here; a simulation in a browser tab needs one.
pub const MAX_NESTED_COMMANDS: u32 = 32;

/// What one command line may print, in bytes; the rest is dropped with a
/// notice on standard error.
pub const MAX_OUTPUT_BYTES: usize = 8 << 20;

/// The message for a command that would nest deeper than
/// [`MAX_NESTED_COMMANDS`]; status 126, as for a command that cannot run.
pub fn nesting_error(program: &str) -> String {
    format!(
        "{program}: cannot start another nested command: this simulated cluster runs command lines inside each other at most {MAX_NESTED_COMMANDS} deep\n"
    )
}

/// The notice after output cut at [`MAX_OUTPUT_BYTES`].
pub fn output_cut_notice() -> String {
    format!("clusterlab: output limit reached ({} MiB per command line); the rest was not shown\n", MAX_OUTPUT_BYTES >> 20)
}

/// Cuts `text` to at most `limit` bytes, at a character boundary. True
/// when something was cut.
pub fn truncate_to(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        let mut text = "aé".to_string();
        assert!(truncate_to(&mut text, 2));
        assert_eq!(text, "a");
        let mut short = "abc".to_string();
        assert!(!truncate_to(&mut short, 3));
    }
}
