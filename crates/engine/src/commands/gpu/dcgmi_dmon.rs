//! `dcgmi dmon -e FIELDS [-i GPUS] [-c N] [-d MS]`: DCGM's field monitor,
//! one row per GPU per sample, laid out as DCGM 3.3's DeviceMonitor does:
//! `#Entity` and `ID` headers padded to 10, each field's column its
//! format width plus 6, cells left-aligned with 2 spaces after, trailing
//! spaces kept; doubles with three decimals, blank values `N/A`; the two
//! header lines again after the 15th sample and every 14 after.
//!
//! Values come from the model at each sample's instant (`dcgm_fields`).
//! Without `-c` the real tool runs until
//! Ctrl-C; this one prints 10 samples. The parse error for a missing `-e`
//! is TCLAP's form, unverified.

use super::dcgm_fields::{self, FieldValue};
use crate::commands::sampling::Sampling;
use crate::commands::{Invocation, Output};
use crate::model::{Cluster, Gpu};
use crate::rng::Rng;

/// (field id, short name, unit, column format width, is a double).
const FIELDS: &[(u32, &str, &str, usize, bool)] = &[
    (100, "SMCLK", "", 5, false),
    (101, "MMCLK", "", 5, false),
    (150, "TMPTR", " C", 5, false),
    (155, "POWER", " W", 10, true),
    (203, "GPUTL", "", 10, false),
    (204, "MCUTL", "", 10, false),
    (252, "FBUSD", "", 10, false),
    (1001, "GRACT", "", 5, true),
    (1002, "SMACT", "", 5, true),
    (1003, "SMOCC", "", 5, true),
    (1004, "TENSO", "", 5, true),
    (1005, "DRAMA", "", 5, true),
    (1009, "PCITX", "", 20, false),
    (1010, "PCIRX", "", 20, false),
    (1011, "NVLTX", "", 20, false),
    (1012, "NVLRX", "", 20, false),
];

const ENTITY_WIDTH: usize = 10;
const PADDING: usize = 2;

type Field = (u32, &'static str, &'static str, usize, bool);

fn cell(text: &str, width: usize) -> String {
    let text = if text.chars().count() > width { format!("{}...", text.chars().take(width.saturating_sub(3)).collect::<String>()) } else { text.to_string() };
    format!("{text:<w$}", w = width + PADDING)
}

fn header(fields: &[Field]) -> String {
    let mut names = format!("{:<ENTITY_WIDTH$}", "#Entity");
    let mut units = format!("{:<ENTITY_WIDTH$}", "ID");
    for (_, name, unit, width, _) in fields {
        names += &cell(name, width + 6);
        units += &cell(unit, width + 6);
    }
    format!("{names}\n{units}\n")
}

/// A field's cell: doubles with three decimals, blanks `N/A`.
fn value(cluster: &Cluster, host: &str, gpu: &Gpu, id: u32, rng: &mut Rng) -> String {
    match dcgm_fields::value(cluster, host, gpu, id, rng) {
        FieldValue::Int(value) => value.to_string(),
        FieldValue::Double(value) => format!("{value:.3}"),
        FieldValue::Blank => "N/A".to_string(),
    }
}

pub fn run(invocation: &Invocation) -> Output {
    let args = invocation.args();
    let (mut fields_arg, mut ids, mut count, mut delay_ms) = (None, None, None, 1000u64);
    let mut at = 1;
    while at < args.len() {
        let (name, inline) = match args[at].split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value.to_string())),
            _ => (args[at].clone(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| {
                at += 1;
                args.get(at).cloned()
            })
        };
        match name.as_str() {
            "-e" | "--field-id" => fields_arg = value(),
            "-i" | "--entity-id" | "--gpu-id" => ids = value(),
            "-c" | "--count" => match value().and_then(|v| v.parse::<u64>().ok()) {
                Some(n) => count = Some(n),
                None => return parse_error("count"),
            },
            "-d" | "--delay" => match value().and_then(|v| v.parse::<u64>().ok()).filter(|ms| *ms >= 1) {
                Some(ms) => delay_ms = ms.min(3_600_000),
                None => return parse_error("delay"),
            },
            _ => return parse_error(name.trim_start_matches('-')),
        }
        at += 1;
    }
    let Some(fields_arg) = fields_arg else {
        return Output::error("PARSE ERROR:  \n             Required argument missing: field-id\n", 255);
    };
    if !fields_arg.starts_with(|c: char| c.is_ascii_digit()) {
        return Output::error("Error: Invalid value for arg field-id.\nAn error occurred trying to parse the command line.\n", 255);
    }
    let mut fields: Vec<Field> = Vec::new();
    for token in fields_arg.split(',') {
        let Ok(id) = token.trim().parse::<u32>() else {
            return Output::error(format!("Error: Expected numerical fieldId. Got '{token}' instead.\n"), 255);
        };
        match FIELDS.iter().find(|field| field.0 == id) {
            Some(field) => fields.push(*field),
            None => return Output::error(format!("Error: Got invalid field ID. '{id}'. See dcgm_fields.h for a list of valid field IDs.\n"), 255),
        }
    }
    let host = invocation.node.hostname.clone();
    let wanted: Option<Vec<u32>> = match ids.as_deref() {
        None | Some("-1") => None,
        Some(list) => match list.split(',').map(|id| id.trim().parse::<u32>().ok()).collect() {
            Some(list) => Some(list),
            None => return Output::error(format!("Error: Invalid entity id '{list}'.\n"), 255),
        },
    };
    let mut out = header(&fields);
    // `-c 0` is dcgmi's "until interrupted".
    let sampling = Sampling { interval_ms: delay_ms, count: count.filter(|n| *n > 0) };
    let duration_ms = sampling.run(invocation.cluster, |sample, now, view| {
        if sample >= 15 && (sample - 15) % 14 == 0 {
            out += &header(&fields);
        }
        let Some(node) = view.node(&host) else { return false };
        for gpu in node.gpus.iter().filter(|gpu| gpu.is_visible() && wanted.as_ref().is_none_or(|w| w.contains(&gpu.index))) {
            let mut rng = Rng::derive(view.seed, &[&host, "dcgmi dmon", &gpu.index.to_string(), &sample.to_string(), &now.to_string()]);
            out += &format!("{:<ENTITY_WIDTH$}", format!("GPU {}", gpu.index));
            for (id, _, _, width, _) in &fields {
                out += &cell(&value(view, &host, gpu, *id, &mut rng), width + 6);
            }
            out.push('\n');
        }
        true
    });
    Output { stdout: out, duration_ms, ..Output::default() }
}

fn parse_error(argument: &str) -> Output {
    Output::error(format!("PARSE ERROR: Argument: {argument}\n             Couldn't find match for argument\n"), 255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_the_field_widths() {
        let fields: Vec<Field> = [155, 203].iter().map(|id| *FIELDS.iter().find(|f| f.0 == *id).unwrap()).collect();
        let text = header(&fields);
        assert_eq!(text, "#Entity   POWER             GPUTL             \nID         W                                  \n");
        assert!(text.lines().all(|line| line.len() == 46));
    }
}
