//! The lab's simulated UTC clock and the date formats tools print.

/// Seconds since the Unix epoch, UTC.
pub type EpochSeconds = i64;

const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// A calendar date and time of day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Thursday (1970-01-01 was one), to index `WEEKDAYS`.
    weekday_from_thursday: u32,
}

/// Howard Hinnant's days-to-civil algorithm: exact for any day count.
pub fn civil(epoch: EpochSeconds) -> Civil {
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil { year, month, day, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60, weekday_from_thursday: days.rem_euclid(7) as u32 }
}

/// The inverse of [`civil`] for a date at midnight.
pub fn epoch_from_date(year: i64, month: u32, day: u32) -> EpochSeconds {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400
}

/// C's `ctime` layout without the newline: `Mon Mar  9 04:35:35 2026`.
pub fn ctime(epoch: EpochSeconds) -> String {
    let c = civil(epoch);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        WEEKDAYS[c.weekday_from_thursday as usize],
        MONTHS[(c.month - 1) as usize],
        c.day,
        c.hour,
        c.minute,
        c.second,
        c.year
    )
}

/// RFC 3339 in UTC, as reports and the Kubernetes API write times: `2026-03-09T09:12:03Z`.
pub fn iso_utc(epoch: EpochSeconds) -> String {
    let c = civil(epoch);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hour, c.minute, c.second)
}

/// HTTP's date (RFC 9110's IMF-fixdate): `Fri, 04 Dec 2026 21:40:00 GMT`.
pub fn http_date(epoch: EpochSeconds) -> String {
    let c = civil(epoch);
    let (weekday, month) = (WEEKDAYS[c.weekday_from_thursday as usize], MONTHS[(c.month - 1) as usize]);
    format!("{weekday}, {:02} {month} {} {:02}:{:02}:{:02} GMT", c.day, c.year, c.hour, c.minute, c.second)
}

/// A lab's offset from its start: `90s`, `10m`, `2h`, or whole seconds, at
/// most a week on; `-12m` is before the start (at most a day).
pub fn parse_duration(text: &str) -> Option<EpochSeconds> {
    let text = text.trim();
    if let Some(before) = text.strip_prefix('-').filter(|rest| !rest.starts_with(['-', '+'])) {
        return parse_duration(before).filter(|seconds| *seconds <= 86_400).map(|seconds| -seconds);
    }
    let (number, unit) = match text.char_indices().last()? {
        (at, 's') => (&text[..at], 1),
        (at, 'm') => (&text[..at], 60),
        (at, 'h') => (&text[..at], 3600),
        _ => (text, 1),
    };
    if number.is_empty() || number.len() > 7 || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = number.parse::<EpochSeconds>().ok()?.checked_mul(unit)?;
    (seconds <= 7 * 86_400).then_some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_known_dates() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        // 2025-03-15 20:33:04 UTC, the timestamp of a real nvidia-smi capture.
        assert_eq!(ctime(1_742_070_784), "Sat Mar 15 20:33:04 2025");
        assert_eq!(ctime(epoch_from_date(2026, 3, 9) + 4 * 3600 + 35 * 60 + 35), "Mon Mar  9 04:35:35 2026");
        assert_eq!(ctime(epoch_from_date(2024, 2, 29)), "Thu Feb 29 00:00:00 2024");
    }

    #[test]
    fn epoch_from_date_inverts_civil() {
        for days in [-800_000i64, -1, 0, 1, 11_016, 20_000, 2_932_896] {
            let c = civil(days * 86_400);
            assert_eq!(epoch_from_date(c.year, c.month, c.day), days * 86_400);
        }
    }
}
