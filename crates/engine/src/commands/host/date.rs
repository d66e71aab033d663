//! `date`: the lab's clock (UTC; the nodes' zone is UTC). `+FORMAT` takes
//! the common strftime codes; `-u`, `-R`, `-I` as GNU date.

use crate::commands::options::{scan, Arg};
use crate::commands::options::gnu_complaint;
use crate::commands::{Command, Example, Flag, Invocation, Output, Signature};
use crate::model::time::{civil, ctime, EpochSeconds};

pub struct Date;

static SIGNATURE: Signature = Signature {
    name: "date",
    summary: "print the system date and time",
    usage: "date [OPTION]... [+FORMAT]",
    flags: &[
        Flag { short: Some('u'), long: Some("utc"), value: None, help: "print Coordinated Universal Time (UTC)" },
        Flag { short: Some('R'), long: Some("rfc-email"), value: None, help: "output date and time in RFC 5322 format" },
        Flag { short: Some('I'), long: Some("iso-8601"), value: None, help: "output date in ISO 8601 format" },
    ],
    examples: &[
        Example { command: "date", description: "the current time on this node" },
        Example { command: "date -u +%Y-%m-%dT%H:%M:%SZ", description: "an ISO timestamp, to compare with log lines" },
    ],
};

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// strftime over the lab's UTC clock.
pub fn strftime(format: &str, at: EpochSeconds) -> String {
    let c = civil(at);
    let weekday = (at.div_euclid(86_400) + 4).rem_euclid(7) as usize;
    let yday = at.div_euclid(86_400) - crate::model::time::epoch_from_date(c.year, 1, 1) / 86_400 + 1;
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let Some(code) = chars.next() else {
            out.push('%');
            break;
        };
        let text = match code {
            'Y' => c.year.to_string(),
            'C' => format!("{:02}", c.year / 100),
            'y' => format!("{:02}", c.year % 100),
            'm' => format!("{:02}", c.month),
            'd' => format!("{:02}", c.day),
            'e' => format!("{:>2}", c.day),
            'H' => format!("{:02}", c.hour),
            'I' => format!("{:02}", (c.hour + 11) % 12 + 1),
            'M' => format!("{:02}", c.minute),
            'S' => format!("{:02}", c.second),
            'N' => "000000000".to_string(),
            'p' => (if c.hour < 12 { "AM" } else { "PM" }).to_string(),
            's' => at.to_string(),
            'a' => DAYS[weekday][..3].to_string(),
            'A' => DAYS[weekday].to_string(),
            'u' => (if weekday == 0 { 7 } else { weekday }).to_string(),
            'w' => weekday.to_string(),
            'b' | 'h' => MONTHS[(c.month - 1) as usize][..3].to_string(),
            'B' => MONTHS[(c.month - 1) as usize].to_string(),
            'j' => format!("{yday:03}"),
            'F' => strftime("%Y-%m-%d", at),
            'T' => strftime("%H:%M:%S", at),
            'R' => strftime("%H:%M", at),
            'D' => strftime("%m/%d/%y", at),
            'c' => strftime("%a %b %e %H:%M:%S %Y", at),
            'x' => strftime("%m/%d/%y", at),
            'X' => strftime("%H:%M:%S", at),
            'Z' => "UTC".to_string(),
            'z' => "+0000".to_string(),
            'n' => "\n".to_string(),
            't' => "\t".to_string(),
            '%' => "%".to_string(),
            other => format!("%{other}"),
        };
        out.push_str(&text);
    }
    out
}

impl Command for Date {
    fn signature(&self) -> &'static Signature {
        &SIGNATURE
    }

    fn run(&self, invocation: &Invocation) -> Output {
        let now = invocation.cluster.now;
        let mut format: Option<String> = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, _) => match flag.short {
                    Some('R') => format = Some("%a, %d %b %Y %H:%M:%S %z".to_string()),
                    Some('I') => format = Some("%Y-%m-%d".to_string()),
                    _ => {}
                },
                Arg::Positional(text) => match text.strip_prefix('+') {
                    Some(f) if format.is_none() => format = Some(f.to_string()),
                    Some(_) => return Output::error(format!("date: extra operand '{text}'\nTry 'date --help' for more information.\n"), 1),
                    None => {
                        return Output::error(format!("date: cannot set date: Operation not permitted\n{}\n", ctime_utc(now)), 1)
                    }
                },
                other => return gnu_complaint("date", &other, 1),
            }
        }
        match format {
            Some(format) => Output::ok(format!("{}\n", strftime(&format, now))),
            None => Output::ok(format!("{}\n", ctime_utc(now))),
        }
    }
}

/// `Mon Mar  9 08:40:00 UTC 2026`.
fn ctime_utc(at: EpochSeconds) -> String {
    let text = ctime(at);
    match text.rsplit_once(' ') {
        Some((head, year)) => format!("{head} UTC {year}"),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_gnu_date() {
        let at = crate::model::time::epoch_from_date(2026, 3, 9) + 8 * 3600 + 40 * 60 + 5;
        assert_eq!(ctime_utc(at), "Mon Mar  9 08:40:05 UTC 2026");
        assert_eq!(strftime("%F %T %Z %a %j %s %%", at), "2026-03-09 08:40:05 UTC Mon 068 1773045605 %");
        assert_eq!(strftime("%A %B %e %I%p", at), "Monday March  9 08AM");
        let out = crate::testing::run_on_first_node("date -u +%Y");
        assert_eq!(out.stdout, "2026\n");
        assert_eq!(crate::testing::run_on_first_node("date -Z").status, 1);
        assert!(crate::testing::run_on_first_node("date").stdout.ends_with(" UTC 2026\n"));
    }
}
