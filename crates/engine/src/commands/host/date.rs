//! `date`: the lab's clock (UTC; the nodes' zone is UTC). `+FORMAT` takes
//! the common strftime codes; `-u`, `-R`, `-I` as GNU date; `-d STRING`
//! reads the dates operators paste (`@1773045600`, `2026-03-09 08:40`, a
//! syslog or ctime stamp, `yesterday`, `2 hours ago`, `now + 90 min`) and
//! `-r FILE` a file's modification time.

use crate::commands::options::gnu_complaint;
use crate::commands::options::{scan, Arg};
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
        Flag { short: Some('d'), long: Some("date"), value: Some("STRING"), help: "display time described by STRING, not 'now'" },
        Flag { short: Some('r'), long: Some("reference"), value: Some("FILE"), help: "display the last modification time of FILE" },
    ],
    examples: &[
        Example { command: "date", description: "the current time on this node" },
        Example { command: "date -u +%Y-%m-%dT%H:%M:%SZ", description: "an ISO timestamp, to compare with log lines" },
        Example { command: "date -d '2 hours ago' +%s", description: "a time two hours back, as seconds since the epoch" },
    ],
};

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

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
        let mut now = invocation.cluster.now;
        let mut format: Option<String> = None;
        for arg in scan(&SIGNATURE, invocation.args()) {
            match arg {
                Arg::Flag(flag, value) => match flag.short {
                    Some('R') => format = Some("%a, %d %b %Y %H:%M:%S %z".to_string()),
                    Some('I') => format = Some("%Y-%m-%d".to_string()),
                    Some('d') => {
                        let text = value.unwrap_or_default();
                        match parse_date(&text, invocation.cluster.now) {
                            Some(at) => now = at,
                            None => return Output::error(format!("date: invalid date '{text}'\n"), 1),
                        }
                    }
                    Some('r') => {
                        let file = value.unwrap_or_default();
                        match crate::commands::files::View::for_command(invocation).metadata(&file) {
                            Some(meta) => now = meta.modified,
                            None => return Output::error(format!("date: {file}: No such file or directory\n"), 1),
                        }
                    }
                    _ => {}
                },
                Arg::Positional(text) => match text.strip_prefix('+') {
                    Some(f) if format.is_none() => format = Some(f.to_string()),
                    Some(_) => return Output::error(format!("date: extra operand '{text}'\nTry 'date --help' for more information.\n"), 1),
                    None => return Output::error(format!("date: cannot set date: Operation not permitted\n{}\n", ctime_utc(now)), 1),
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

/// The seconds of a relative unit (`min`, `hours`, `fortnight`), as GNU's parser names them.
fn unit_seconds(word: &str) -> Option<i64> {
    let word = word.strip_suffix('s').filter(|w| !w.is_empty() && *w != "sec" || word == "secs").unwrap_or(word);
    Some(match word {
        "sec" | "second" | "secs" => 1,
        "min" | "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        "fortnight" => 14 * 86_400,
        "month" => 30 * 86_400,
        "year" => 365 * 86_400,
        _ => return None,
    })
}

fn month_number(word: &str) -> Option<u32> {
    let word = word.to_ascii_lowercase();
    MONTHS.iter().position(|m| word.len() >= 3 && m.to_ascii_lowercase().starts_with(&word)).map(|i| i as u32 + 1)
}

/// `HH:MM[:SS]` as seconds into the day.
fn clock(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let mut seconds = 0;
    for (index, part) in parts.iter().enumerate() {
        let part = if index == 2 { part.split('.').next().unwrap_or(part) } else { part };
        let value: i64 = part.parse().ok().filter(|_| !part.is_empty() && part.len() <= 2)?;
        let limit = if index == 0 { 24 } else { 60 };
        if value >= limit {
            return None;
        }
        seconds = seconds * 60 + value;
    }
    if parts.len() == 2 {
        seconds *= 60;
    }
    Some(seconds)
}

/// GNU date's `-d`: an absolute date and time (ISO, `@EPOCH`, syslog or
/// ctime stamps), words (`now today yesterday tomorrow`), and relative
/// items (`2 hours ago`, `+90 min`, `-1 day`), in any order. The zone is UTC.
pub fn parse_date(text: &str, now: EpochSeconds) -> Option<EpochSeconds> {
    let text = text.trim();
    if let Some(epoch) = text.strip_prefix('@') {
        return epoch.trim().parse::<i64>().ok().filter(|e| e.unsigned_abs() < 1 << 40);
    }
    let day_start = |at: EpochSeconds| at - at.rem_euclid(86_400);
    // An empty string is midnight today, as GNU reads it.
    let (mut date, mut time): (Option<EpochSeconds>, Option<i64>) = (None, None);
    let mut relative: i64 = 0;
    let mut month_day: Option<(u32, u32)> = None;
    // A `-` standing alone negates the item after it (`now - 1 hour`).
    let mut sign = 1;
    // `2026-03-09T08:40:00Z`: the ISO date and time are two items.
    let mut words: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match word.split_at_checked(10) {
            Some((day, rest)) if rest.starts_with(['T', 't']) && day.as_bytes().get(4) == Some(&b'-') => {
                words.push(day.to_string());
                words.push(rest[1..].to_string());
            }
            _ => words.push(word.to_string()),
        }
    }
    let mut at = 0;
    let current = civil(now);
    while at < words.len() {
        let word = words[at].to_ascii_lowercase();
        let next = words.get(at + 1).map(|w| w.to_ascii_lowercase());
        at += 1;
        match word.as_str() {
            "now" | "+" => {}
            "-" => sign = -sign,
            "today" => date = Some(day_start(now)),
            "yesterday" => relative -= 86_400,
            "tomorrow" => relative += 86_400,
            "utc" | "gmt" | "z" | "+0000" | "ago" => {}
            w if DAYS.iter().any(|d| d.to_ascii_lowercase().starts_with(w) && w.len() >= 3) => {}
            w if w.len() == 10 && w.as_bytes()[4] == b'-' && w.as_bytes()[7] == b'-' => {
                let year: i64 = w[..4].parse().ok()?;
                let month: u32 = w[5..7].parse().ok().filter(|m| (1..=12).contains(m))?;
                let day: u32 = w[8..10].parse().ok().filter(|d| (1..=31).contains(d))?;
                date = Some(crate::model::time::epoch_from_date(year, month, day));
            }
            w if w.contains(':') => time = Some(clock(w.trim_end_matches('z'))?),
            w if month_number(w).is_some() => {
                // `Mar 9`, `Mar  9 08:41:05`, `Mar 9 2025`, ctime's `... 08:40:00 UTC 2026`.
                let month = month_number(w)?;
                let day: u32 = next.as_deref().and_then(|d| d.parse().ok()).filter(|d| (1..=31).contains(d))?;
                at += 1;
                month_day = Some((month, day));
                date = Some(crate::model::time::epoch_from_date(current.year, month, day));
            }
            w if month_day.is_some() && w.len() == 4 && w.parse::<i64>().is_ok_and(|y| y >= 1970) => {
                let (month, day) = month_day?;
                date = Some(crate::model::time::epoch_from_date(w.parse().ok()?, month, day));
            }
            w => {
                // A relative item: `2 hours`, `+90 min`, `-1day`, `hour` (one).
                let digits = w.trim_start_matches(['+', '-']);
                let number_len = digits.chars().take_while(char::is_ascii_digit).count();
                let (count, unit) = if number_len == 0 {
                    (1, w.to_string())
                } else {
                    let value: i64 = digits[..number_len].parse().ok()?;
                    let value = if w.starts_with('-') { -value } else { value };
                    let rest = &digits[number_len..];
                    if rest.is_empty() {
                        at += 1;
                        (value, next.clone()?)
                    } else {
                        (value, rest.to_string())
                    }
                };
                let seconds = unit_seconds(&unit)?;
                let ago = words.get(at).is_some_and(|w| w.eq_ignore_ascii_case("ago"));
                let delta = count.checked_mul(seconds)?.checked_mul(std::mem::replace(&mut sign, 1))?;
                relative = relative.checked_add(if ago { -delta } else { delta })?;
            }
        }
    }
    let base = match (date, time) {
        (Some(date), Some(time)) => date + time,
        (Some(date), None) => date,
        (None, Some(time)) => day_start(now) + time,
        (None, None) if words.is_empty() => day_start(now),
        (None, None) => now,
    };
    base.checked_add(relative)
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

    #[test]
    fn reads_dates_as_gnu_date_does() {
        let now = crate::model::time::epoch_from_date(2026, 3, 9) + 8 * 3600 + 40 * 60;
        let at = |text: &str| parse_date(text, now).map(|at| strftime("%F %T", at));
        assert_eq!(at("@0").as_deref(), Some("1970-01-01 00:00:00"));
        assert_eq!(at("2026-03-08 23:59:30").as_deref(), Some("2026-03-08 23:59:30"));
        assert_eq!(at("2026-03-08T01:02:03Z").as_deref(), Some("2026-03-08 01:02:03"));
        assert_eq!(at("Mar  9 08:41:05").as_deref(), Some("2026-03-09 08:41:05"));
        assert_eq!(at("Mon Mar  9 08:40:00 UTC 2026").as_deref(), Some("2026-03-09 08:40:00"));
        assert_eq!(at("yesterday").as_deref(), Some("2026-03-08 08:40:00"));
        assert_eq!(at("2 hours ago").as_deref(), Some("2026-03-09 06:40:00"));
        assert_eq!(at("now + 90 min").as_deref(), Some("2026-03-09 10:10:00"));
        assert_eq!(at("now - 1 hour").as_deref(), Some("2026-03-09 07:40:00"));
        assert_eq!(at("-1day").as_deref(), Some("2026-03-08 08:40:00"));
        assert_eq!(at("").as_deref(), Some("2026-03-09 00:00:00"));
        assert_eq!(at("12:00").as_deref(), Some("2026-03-09 12:00:00"));
        assert_eq!(at("soon"), None);
        assert_eq!(at("25:00"), None);
        let bad = crate::testing::run_on_first_node("date -d soon");
        assert_eq!((bad.stderr.as_str(), bad.status), ("date: invalid date 'soon'\n", 1));
        assert_eq!(crate::testing::run_on_first_node("date -d @1773045600 +%s").stdout, "1773045600\n");
    }
}
