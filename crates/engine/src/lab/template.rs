//! Per-trainee variants: `[vars]` and the `{name}` substitution.
//!
//! A trainee seed picks one value per variable with [`Rng::derive`], so the
//! same lab and seed give the same lab on every platform; the CLI's `--seed`
//! and the web app use this same rule.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VarSpec {
    OneOf(Vec<String>),
    /// Integers `lo..=hi`.
    Range(i64, i64),
    /// Values that go together (a fault's kind and the Xid it leaves):
    /// each a table, its keys read as `{var.key}`.
    Records(Vec<Vec<(String, String)>>),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Var {
    pub name: String,
    pub spec: VarSpec,
}

impl Var {
    /// How many values the variable can take.
    pub fn cardinality(&self) -> u64 {
        match &self.spec {
            VarSpec::OneOf(values) => values.len() as u64,
            VarSpec::Records(records) => records.len() as u64,
            // Lab data may come from anywhere: the span is computed without overflow.
            VarSpec::Range(lo, hi) => hi.checked_sub(*lo).and_then(|span| span.checked_add(1)).map_or(0, |n| n.max(0) as u64),
        }
    }

    pub fn value_at(&self, at: u64) -> String {
        match &self.spec {
            VarSpec::OneOf(values) => values.get(at as usize).cloned().unwrap_or_default(),
            VarSpec::Range(lo, _) => lo.saturating_add(i64::try_from(at).unwrap_or(i64::MAX)).to_string(),
            VarSpec::Records(_) => at.to_string(),
        }
    }

    /// The values the variable's `at`th pick defines: itself, and for a
    /// record each `var.key`.
    pub fn define(&self, at: u64, values: &mut Values) {
        values.insert(self.name.clone(), self.value_at(at));
        if let VarSpec::Records(records) = &self.spec {
            for (key, value) in records.get(at as usize).into_iter().flatten() {
                values.insert(format!("{}.{key}", self.name), value.clone());
            }
        }
    }
}

/// Values chosen for every variable.
pub type Values = BTreeMap<String, String>;

/// The values a trainee seed picks.
pub fn pick(vars: &[Var], lab_id: &str, seed: u64) -> Values {
    let mut values = Values::new();
    for var in vars {
        let mut rng = Rng::derive(seed, &["vars", lab_id, &var.name]);
        let at = rng.range_u64(0, var.cardinality().saturating_sub(1));
        var.define(at, &mut values);
    }
    values
}

/// Every combination of values, or `limit` seeded samples when there are more.
pub fn all_values(vars: &[Var], lab_id: &str, limit: u64) -> Vec<Values> {
    let total = vars.iter().try_fold(1u64, |product, var| product.checked_mul(var.cardinality().max(1)));
    match total {
        Some(total) if total <= limit => (0..total)
            .map(|mut combination| {
                let mut values = Values::new();
                for var in vars {
                    let n = var.cardinality().max(1);
                    let at = combination % n;
                    combination /= n;
                    var.define(at, &mut values);
                }
                values
            })
            .collect(),
        _ => (0..limit).map(|seed| pick(vars, lab_id, seed)).collect(),
    }
}

pub fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_') && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Replaces each `{name}` with its value. Only identifier-shaped names count
/// (so `awk '{print $1}'` in a prompt is left alone); `{{` and `}}` write
/// literal braces. Errs with the first undefined name.
pub fn substitute(text: &str, values: &Values) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(inside) = tail.strip_prefix('{') {
            // A name is identifier characters then `}`: look no further, so
            // text full of braces costs linear time.
            let len = inside.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.').count();
            let name = &inside[..len];
            let named = match name.split_once('.') {
                Some((var, key)) => is_var_name(var) && is_var_name(key),
                None => is_var_name(name),
            };
            if tail.as_bytes().get(1 + len) == Some(&b'}') && named {
                match values.get(name) {
                    Some(value) => out.push_str(value),
                    None => return Err(name.to_string()),
                }
                rest = &tail[len + 2..];
                continue;
            }
        }
        out.push_str(&tail[..1]);
        rest = &tail[1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> Values {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn substitutes_known_names_and_leaves_code_alone() {
        let v = values(&[("bad_node", "gpu-002")]);
        assert_eq!(substitute("node {bad_node}!", &v).unwrap(), "node gpu-002!");
        assert_eq!(substitute("awk '{print $1}'", &v).unwrap(), "awk '{print $1}'");
        assert_eq!(substitute("{{bad_node}}", &v).unwrap(), "{bad_node}");
        assert_eq!(substitute("{nope}", &v).unwrap_err(), "nope");
        assert_eq!(substitute("{ unclosed", &v).unwrap(), "{ unclosed");
        assert_eq!(substitute("é{bad_node}é", &v).unwrap(), "égpu-002é");
    }

    #[test]
    fn picks_are_stable_and_cover_the_space() {
        let vars = vec![Var { name: "a".into(), spec: VarSpec::OneOf(vec!["x".into(), "y".into()]) }, Var { name: "b".into(), spec: VarSpec::Range(1, 3) }];
        assert_eq!(pick(&vars, "lab", 5), pick(&vars, "lab", 5));
        let all = all_values(&vars, "lab", 100);
        assert_eq!(all.len(), 6);
        let sampled = all_values(&vars, "lab", 4);
        assert_eq!(sampled.len(), 4);
    }
}
