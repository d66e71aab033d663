//! A JSON Schema of the lab format, for editors (`clusterlab schema`).
//! Generated from the same constants the loader checks against.

use crate::lab::{FABRICS, FAULT_KINDS, LEVELS, PORT_DOWN_STATES, QUESTION_TYPES, STAGES};
use crate::model::preset;

fn strings(items: impl IntoIterator<Item = &'static str>) -> String {
    let quoted: Vec<String> = items.into_iter().map(|item| format!("\"{item}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The schema as pretty-printed JSON.
pub fn json_schema() -> String {
    let fault_kinds = strings(FAULT_KINDS.iter().map(|(kind, _, _)| *kind));
    let fault_rules: Vec<String> = FAULT_KINDS
        .iter()
        .map(|(kind, required, _)| {
            format!(
                "        {{ \"if\": {{ \"properties\": {{ \"kind\": {{ \"const\": \"{kind}\" }} }} }}, \"then\": {{ \"required\": {} }} }}",
                strings(required.iter().copied())
            )
        })
        .collect();
    // The same releases the loader accepts (model::known_slurm, known_kubernetes).
    let slurm = format!("^({})(\\\\.[0-9]+)?$", crate::model::SLURM_RELEASES.join("|").replace('.', "\\\\."));
    let minors: Vec<String> = crate::model::KUBERNETES_MINORS.map(|minor| minor.to_string()).collect();
    let kubernetes = format!("^v?1\\\\.({})\\\\.[0-9]+$", minors.join("|"));
    format!(
        r##"{{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://clusterlab.invalid/lab.schema.json",
  "title": "ClusterLab lab file",
  "description": "One lab per TOML file. See docs/authoring.md.",
  "type": "object",
  "additionalProperties": false,
  "required": ["lab", "cluster"],
  "$defs": {{
    "templated_int": {{ "oneOf": [{{ "type": "integer" }}, {{ "type": "string", "description": "a whole number or a {{var}}" }}] }}
  }},
  "properties": {{
    "lab": {{
      "type": "object",
      "additionalProperties": false,
      "required": ["id", "title", "summary"],
      "properties": {{
        "id": {{ "type": "string", "pattern": "^[a-z0-9-]+$" }},
        "title": {{ "type": "string" }},
        "summary": {{ "type": "string" }},
        "briefing": {{ "type": "string", "description": "Markdown" }},
        "level": {{ "enum": {levels} }},
        "minutes": {{ "type": "integer", "minimum": 1 }},
        "stage": {{ "enum": {stages} }},
        "tags": {{ "type": "array", "items": {{ "type": "string" }} }}
      }}
    }},
    "cluster": {{
      "type": "object",
      "additionalProperties": false,
      "required": ["preset"],
      "properties": {{
        "preset": {{ "enum": {presets} }},
        "nodes": {{ "type": "array", "items": {{ "type": "string" }}, "minItems": 1 }},
        "count": {{ "type": "integer", "minimum": 1, "maximum": 4096 }},
        "driver": {{ "type": "string" }},
        "cuda": {{ "type": "string" }},
        "nccl": {{ "type": "string" }},
        "dcgm": {{ "type": "string" }},
        "fabric": {{ "enum": {fabrics} }},
        "hcas": {{ "type": "integer", "minimum": 1 }},
        "persistence": {{ "type": "boolean" }},
        "slurm": {{ "type": "string", "pattern": "{slurm}" }},
        "kubernetes": {{ "type": "string", "pattern": "{kubernetes}" }}
      }}
    }},
    "vars": {{
      "type": "object",
      "additionalProperties": {{
        "type": "object",
        "additionalProperties": false,
        "properties": {{
          "one_of": {{ "type": "array", "minItems": 1 }},
          "range": {{ "type": "array", "items": {{ "type": "integer" }}, "minItems": 2, "maxItems": 2 }}
        }}
      }}
    }},
    "faults": {{
      "type": "array",
      "items": {{
        "type": "object",
        "additionalProperties": false,
        "required": ["kind"],
        "properties": {{
          "kind": {{ "enum": {fault_kinds} }},
          "node": {{ "type": "string" }},
          "gpu": {{ "$ref": "#/$defs/templated_int" }},
          "hca": {{ "type": "string" }},
          "xid": {{ "$ref": "#/$defs/templated_int" }},
          "count": {{ "$ref": "#/$defs/templated_int" }},
          "gen": {{ "$ref": "#/$defs/templated_int" }},
          "width": {{ "$ref": "#/$defs/templated_int" }},
          "rate": {{ "$ref": "#/$defs/templated_int" }},
          "mtu": {{ "$ref": "#/$defs/templated_int" }},
          "links": {{ "oneOf": [{{ "$ref": "#/$defs/templated_int" }}, {{ "type": "array", "items": {{ "$ref": "#/$defs/templated_int" }} }}] }},
          "state": {{ "enum": {port_states} }},
          "reason": {{ "type": "string" }},
          "repair": {{ "oneOf": [{{ "enum": {repairs} }}, {{ "type": "array", "items": {{ "enum": {repairs} }} }}] }}
        }},
        "allOf": [
{fault_rules}
        ]
      }}
    }},
    "questions": {{
      "type": "array",
      "items": {{
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "type", "prompt", "answer"],
        "properties": {{
          "id": {{ "type": "string" }},
          "type": {{ "enum": {question_types} }},
          "prompt": {{ "type": "string", "description": "Markdown" }},
          "choices": {{ "type": "array", "items": {{ "type": "string" }}, "minItems": 2 }},
          "answer": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}, {{ "type": "array", "items": {{ "type": "string" }} }}] }},
          "accept": {{ "type": "array", "items": {{ "type": "string" }} }},
          "tolerance": {{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%?\\s*$" }},
          "unit": {{ "type": "string" }},
          "points": {{ "type": "integer", "minimum": 0 }},
          "hints": {{ "type": "array", "items": {{ "type": "string" }} }},
          "explanation": {{ "type": "string", "description": "Markdown" }}
        }}
      }}
    }}
  }}
}}
"##,
        levels = strings(LEVELS.iter().copied()),
        stages = strings(STAGES.iter().copied()),
        presets = strings(preset::ids()),
        fabrics = strings(FABRICS.iter().copied()),
        fault_kinds = fault_kinds,
        port_states = strings(PORT_DOWN_STATES.iter().copied()),
        question_types = strings(QUESTION_TYPES.iter().copied()),
        repairs = strings(crate::model::change::REPAIR_ACTIONS.iter().map(|(name, _)| *name)),
        fault_rules = fault_rules.join(",\n"),
    )
}
