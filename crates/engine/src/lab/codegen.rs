//! Lab files as Rust code, for the browser build: `build.rs` of the app
//! loads and checks every lab at build time, then compiles each one in as
//! the expression this module writes. The app then needs neither the TOML
//! parser nor the authoring checks, which would not fit its size budget.
//! Locations are not kept: only the checks use them.

use std::collections::BTreeMap;

use super::file::{AnswerValue, ClusterTable, FaultTable, LabFile, LabTable, Links, QuestionTable, Scalar, Spanned, VarTable};

const FILE: &str = "::clusterlab_engine::lab::file";

/// A Rust expression that builds the same value.
pub trait ToRust {
    fn to_rust(&self) -> String;
}

impl ToRust for String {
    fn to_rust(&self) -> String {
        // A str's Debug form is a valid Rust string literal.
        format!("String::from({self:?})")
    }
}

impl ToRust for u32 {
    fn to_rust(&self) -> String {
        format!("{self}u32")
    }
}

impl ToRust for i64 {
    fn to_rust(&self) -> String {
        format!("{self}i64")
    }
}

impl ToRust for f64 {
    fn to_rust(&self) -> String {
        format!("{self:?}f64")
    }
}

impl ToRust for bool {
    fn to_rust(&self) -> String {
        self.to_string()
    }
}

impl<T: ToRust> ToRust for Option<T> {
    fn to_rust(&self) -> String {
        self.as_ref().map_or("None".to_string(), |value| format!("Some({})", value.to_rust()))
    }
}

impl<T: ToRust> ToRust for Vec<T> {
    fn to_rust(&self) -> String {
        format!("vec![{}]", self.iter().map(ToRust::to_rust).collect::<Vec<_>>().join(", "))
    }
}

impl<T: ToRust> ToRust for Spanned<T> {
    fn to_rust(&self) -> String {
        format!("{FILE}::Spanned::new(0..0, {})", self.get_ref().to_rust())
    }
}

impl ToRust for Scalar {
    fn to_rust(&self) -> String {
        match self {
            Scalar::Integer(n) => format!("{FILE}::Scalar::Integer({})", n.to_rust()),
            Scalar::Float(x) => format!("{FILE}::Scalar::Float({})", x.to_rust()),
            Scalar::Bool(b) => format!("{FILE}::Scalar::Bool({b})"),
            Scalar::Text(text) => format!("{FILE}::Scalar::Text({})", text.to_rust()),
        }
    }
}

impl ToRust for Links {
    fn to_rust(&self) -> String {
        match self {
            Links::Count(n) => format!("{FILE}::Links::Count({})", n.to_rust()),
            Links::List(list) => format!("{FILE}::Links::List({})", list.to_rust()),
        }
    }
}

impl ToRust for AnswerValue {
    fn to_rust(&self) -> String {
        match self {
            AnswerValue::Number(x) => format!("{FILE}::AnswerValue::Number({})", x.to_rust()),
            AnswerValue::Text(text) => format!("{FILE}::AnswerValue::Text({})", text.to_rust()),
            AnswerValue::List(list) => format!("{FILE}::AnswerValue::List({})", list.to_rust()),
        }
    }
}

/// `Type { a: .., b: .. }` from (field, value) pairs.
fn record(name: &str, fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields.iter().map(|(field, value)| format!("{field}: {value}")).collect();
    format!("{FILE}::{name} {{ {} }}", body.join(", "))
}

impl ToRust for VarTable {
    fn to_rust(&self) -> String {
        record("VarTable", &[("one_of", self.one_of.to_rust()), ("range", self.range.to_rust())])
    }
}

impl ToRust for FaultTable {
    fn to_rust(&self) -> String {
        record(
            "FaultTable",
            &[
                ("kind", self.kind.to_rust()),
                ("node", self.node.to_rust()),
                ("gpu", self.gpu.to_rust()),
                ("hca", self.hca.to_rust()),
                ("xid", self.xid.to_rust()),
                ("count", self.count.to_rust()),
                ("gen", self.gen.to_rust()),
                ("width", self.width.to_rust()),
                ("rate", self.rate.to_rust()),
                ("mtu", self.mtu.to_rust()),
                ("links", self.links.to_rust()),
                ("state", self.state.to_rust()),
                ("reason", self.reason.to_rust()),
                ("repair", self.repair.to_rust()),
            ],
        )
    }
}

impl ToRust for QuestionTable {
    fn to_rust(&self) -> String {
        record(
            "QuestionTable",
            &[
                ("id", self.id.to_rust()),
                ("kind", self.kind.to_rust()),
                ("prompt", self.prompt.to_rust()),
                ("choices", self.choices.to_rust()),
                ("answer", self.answer.to_rust()),
                ("accept", self.accept.to_rust()),
                ("tolerance", self.tolerance.to_rust()),
                ("unit", self.unit.to_rust()),
                ("points", self.points.to_rust()),
                ("hints", self.hints.to_rust()),
                ("explanation", self.explanation.to_rust()),
            ],
        )
    }
}

impl ToRust for LabTable {
    fn to_rust(&self) -> String {
        record(
            "LabTable",
            &[
                ("id", self.id.to_rust()),
                ("title", self.title.to_rust()),
                ("summary", self.summary.to_rust()),
                ("briefing", self.briefing.to_rust()),
                ("level", self.level.to_rust()),
                ("minutes", self.minutes.to_rust()),
                ("stage", self.stage.to_rust()),
                ("tags", self.tags.to_rust()),
            ],
        )
    }
}

impl ToRust for ClusterTable {
    fn to_rust(&self) -> String {
        record(
            "ClusterTable",
            &[
                ("preset", self.preset.to_rust()),
                ("nodes", self.nodes.to_rust()),
                ("count", self.count.to_rust()),
                ("driver", self.driver.to_rust()),
                ("cuda", self.cuda.to_rust()),
                ("nccl", self.nccl.to_rust()),
                ("dcgm", self.dcgm.to_rust()),
                ("fabric", self.fabric.to_rust()),
                ("hcas", self.hcas.to_rust()),
                ("persistence", self.persistence.to_rust()),
            ],
        )
    }
}

fn vars(vars: &BTreeMap<String, Spanned<VarTable>>) -> String {
    let pairs: Vec<String> = vars.iter().map(|(name, table)| format!("({}, {})", name.to_rust(), table.to_rust())).collect();
    format!("[{}].into_iter().collect()", pairs.join(", "))
}

impl ToRust for LabFile {
    fn to_rust(&self) -> String {
        record(
            "LabFile",
            &[
                ("lab", self.lab.to_rust()),
                ("cluster", self.cluster.to_rust()),
                ("vars", vars(&self.vars)),
                ("faults", self.faults.to_rust()),
                ("questions", self.questions.to_rust()),
            ],
        )
    }
}

/// The Rust expression for the lab in `source`, or its problems.
pub fn lab_expression(source: &str) -> Result<String, Vec<super::Diagnostic>> {
    super::load(source)?;
    let file = super::file::parse(source).map_err(|_| Vec::new())?;
    Ok(file.to_rust())
}

#[cfg(test)]
mod tests {
    #[test]
    fn writes_an_expression_for_a_lab() {
        let source = include_str!("../../../../labs/slow-rail.toml");
        let code = super::lab_expression(source).expect("a valid lab");
        assert!(code.starts_with("::clusterlab_engine::lab::file::LabFile { lab: "));
        assert!(code.contains("String::from(\"slow-rail\")"));
        assert!(code.contains("repair: Some(::clusterlab_engine::lab::file::Spanned::new(0..0, vec![String::from(\"reseat-cable\")"));
    }
}
