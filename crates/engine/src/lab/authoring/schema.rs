//! A JSON Schema of the lab format, for editors (`clusterlab schema`).
//! Generated from the same constants the loader checks against.

use crate::lab::{ENTITIES, FABRICS, FAULT_KINDS, LEVELS, PORT_DOWN_STATES, QUESTION_TYPES, SLURM_STATES, STAGES};
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
    // A state, or several joined by `|` (`drained|down`).
    let slurm_states = format!("^({states})(\\\\|({states}))*$", states = SLURM_STATES.join("|"));
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
    "templated_int": {{ "oneOf": [{{ "type": "integer" }}, {{ "type": "string", "description": "a whole number or a {{var}}" }}] }},
    "fact": {{
      "type": "object",
      "additionalProperties": false,
      "description": "one fact the cluster must show: one of slurm, in_service, repaired, healthy, diag, link_up, rate, pcie_full, service, fabric_manager, all_reduce_within, job",
      "properties": {{
        "node": {{ "type": "string" }},
        "slurm": {{ "type": "string", "pattern": "{slurm_states}", "description": "a state, or states separated by | (drained|down)" }},
        "reason": {{ "type": "string" }},
        "in_service": {{ "const": true }},
        "repaired": {{ "const": true }},
        "gpu": {{ "$ref": "#/$defs/templated_int" }},
        "healthy": {{ "const": true }},
        "diag": {{ "$ref": "#/$defs/templated_int", "description": "dcgmi diag -r LEVEL passes" }},
        "hca": {{ "type": "string" }},
        "link_up": {{ "const": true }},
        "rate": {{ "$ref": "#/$defs/templated_int", "description": "Gb/s" }},
        "pcie_full": {{ "const": true }},
        "service": {{ "enum": {services} }},
        "active": {{ "type": "boolean" }},
        "fabric_manager": {{ "enum": ["active", "inactive"] }},
        "all_reduce_within": {{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$" }},
        "pod": {{ "type": "string", "description": "a [[pods]] name: with running = true, the pod is Running and ready on healthy GPUs" }},
        "kubernetes": {{ "enum": ["cordoned", "schedulable"], "description": "with node: the node's cordon in Kubernetes" }},
        "running": {{ "type": "boolean", "description": "with pod: true" }},
        "alert": {{ "type": "string", "description": "with node: an alerting rule of that name, loaded by Prometheus, has an alert for the node now and finds nothing on the healthy cluster" }},
        "job": {{ "type": "string", "description": "a [[jobs]] name: it runs and makes progress" }},
        "step_time_within": {{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$" }},
        "lost_iterations_at_most": {{ "type": ["integer", "string"], "description": "with job: its runs that were stopped lost at most this many iterations since their last checkpoint" }},
        "context_at_least": {{ "type": ["integer", "string"], "description": "with job: its latest run is a server that takes requests of at least this many tokens (its --max-model-len)" }},
        "restarted_within": {{ "type": "string", "pattern": "^\\s*[0-9]+[smh]?\\s*$", "description": "with job: after each stop, the next run's first step came within this time of the stop (queue wait, start-up, checkpoint load), e.g. 15m" }},
        "by": {{ "type": "string", "pattern": "^\\s*[0-9]+[smh]?\\s*$", "description": "a deadline from the lab's start on its simulated clock, e.g. 30m" }}
      }}
    }},
    "run": {{
      "type": "object",
      "additionalProperties": false,
      "required": ["program"],
      "properties": {{
        "program": {{ "type": "string" }},
        "options": {{ "type": "object", "additionalProperties": {{ "oneOf": [{{ "type": "boolean" }}, {{ "type": "string" }}, {{ "type": "number" }}] }} }},
        "operands": {{ "type": "array", "items": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}] }} }},
        "host": {{ "type": "string" }},
        "hosts": {{ "type": "array", "items": {{ "type": "string" }} }},
        "span": {{ "$ref": "#/$defs/templated_int" }},
        "status": {{ "enum": {run_statuses} }},
        "output": {{ "type": "string" }}
      }}
    }}
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
        "tags": {{ "type": "array", "items": {{ "type": "string" }} }},
        "requires": {{ "type": "array", "items": {{ "type": "string", "pattern": "^[a-z0-9-]+$" }}, "description": "the ids of the labs to pass before this one" }},
        "pass": {{ "type": "integer", "minimum": 0, "maximum": 100, "description": "percent of the points that passes" }},
        "exam_minutes": {{ "type": "integer", "minimum": 1, "maximum": 600, "description": "the time an exam of this lab allows" }}
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
        "kubernetes": {{ "type": "string", "pattern": "{kubernetes}" }},
        "storage_gb_per_s": {{ "type": "number", "minimum": 0.05, "maximum": 1000, "description": "shared storage's bandwidth to each node" }},
        "slurm_on_kubernetes": {{ "type": "boolean", "description": "Slurm's daemons run in pods under the slurm-operator" }}
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
          "watts": {{ "$ref": "#/$defs/templated_int", "description": "gpu-power-cap: the limit in W, below the board's default" }},
          "links": {{ "oneOf": [{{ "$ref": "#/$defs/templated_int" }}, {{ "type": "array", "items": {{ "$ref": "#/$defs/templated_int" }} }}] }},
          "state": {{ "enum": {port_states} }},
          "reason": {{ "type": "string" }},
          "installed": {{ "type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$", "description": "driver-mismatch: the driver version the package update installed" }},
          "service": {{ "type": "string", "description": "service-stopped: the unit left stopped, e.g. dcgm-exporter" }},
          "repair": {{ "oneOf": [{{ "enum": {repairs} }}, {{ "type": "array", "items": {{ "enum": {repairs} }} }}] }},
          "at": {{ "type": "string", "pattern": "^[0-9]+[smh]?$", "description": "when it strikes after the lab starts: 90s, 10m, 2h" }}
        }},
        "allOf": [
{fault_rules}
        ]
      }}
    }},
    "jobs": {{
      "type": "array",
      "maxItems": {max_jobs},
      "items": {{
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "params"],
        "if": {{ "not": {{ "properties": {{ "kind": {{ "const": "serving" }} }}, "required": ["kind"] }} }},
        "then": {{ "required": ["global_batch", "seq_len"] }},
        "else": {{ "required": ["request_rate"] }},
        "properties": {{
          "name": {{ "type": "string", "pattern": "^[A-Za-z0-9._-]+$" }},
          "kind": {{ "enum": ["training", "fine-tuning", "serving"] }},
          "nodes": {{ "oneOf": [{{ "type": "array", "items": {{ "type": "string" }}, "minItems": 1 }}, {{ "type": "integer", "minimum": 1 }}] }},
          "gpus_per_node": {{ "type": "integer", "minimum": 1 }},
          "params": {{ "type": "string", "pattern": "^[0-9.]+[BbMmTt]$", "description": "model size: 8B, 70B, 350M" }},
          "data": {{ "type": "integer", "minimum": 1 }},
          "tensor": {{ "type": "integer", "minimum": 1, "maximum": 64 }},
          "pipeline": {{ "type": "integer", "minimum": 1, "maximum": 128 }},
          "global_batch": {{ "type": "integer", "minimum": 1 }},
          "seq_len": {{ "type": "integer", "minimum": 128, "maximum": 131072 }},
          "dataset": {{ "type": "string" }},
          "loader_workers": {{ "type": "integer", "minimum": 1, "maximum": 64 }},
          "checkpoint_every": {{ "type": "integer", "minimum": 0 }},
          "steps": {{ "type": "integer", "minimum": 1, "maximum": {max_steps} }},
          "launch": {{ "enum": ["slurm"] }},
          "start": {{ "enum": ["running", "launch"] }},
          "request_rate": {{ "type": "number", "minimum": 0, "maximum": 10000, "description": "a server's requests a second" }},
          "prompt_tokens": {{ "type": "integer", "minimum": 1, "maximum": 131072 }},
          "output_tokens": {{ "type": "integer", "minimum": 1, "maximum": 131072 }},
          "max_num_seqs": {{ "type": "integer", "minimum": 1, "maximum": 4096 }}
        }}
      }}
    }},
    "pods": {{
      "type": "array",
      "maxItems": {max_jobs},
      "items": {{
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "image"],
        "properties": {{
          "name": {{ "type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "description": "the pod, its container and ~/NAME.yaml" }},
          "image": {{ "type": "string" }},
          "command": {{ "type": "array", "items": {{ "type": "string" }} }},
          "gpus": {{ "type": "integer", "minimum": 0, "maximum": 8, "description": "resources.limits nvidia.com/gpu" }},
          "node": {{ "type": "string", "description": "pinned to this node (nodeSelector kubernetes.io/hostname)" }},
          "restart": {{ "enum": ["Always", "OnFailure", "Never"] }},
          "start": {{ "enum": ["running", "apply"] }}
        }}
      }}
    }},
    "questions": {{
      "type": "array",
      "items": {{
        "type": "object",
        "additionalProperties": false,
        "required": ["id", "type", "prompt"],
        "if": {{ "properties": {{ "type": {{ "enum": ["task", "state", "handoff"] }} }} }},
        "then": {{ "not": {{ "required": ["answer"] }} }},
        "else": {{ "required": ["answer"] }},
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
          "explanation": {{ "type": "string", "description": "Markdown" }},
          "entity": {{ "enum": {entities} }},
          "program": {{ "type": "string", "description": "task: the program that must run" }},
          "options": {{ "$ref": "#/$defs/run/properties/options" }},
          "operands": {{ "$ref": "#/$defs/run/properties/operands" }},
          "host": {{ "type": "string", "description": "task: a pattern over a host it ran on" }},
          "hosts": {{ "type": "array", "items": {{ "type": "string" }}, "description": "task: it ran on all of these" }},
          "span": {{ "$ref": "#/$defs/templated_int", "description": "task: one run over at least this many nodes" }},
          "status": {{ "enum": {run_statuses} }},
          "output": {{ "type": "string", "description": "task: a pattern its output must match" }},
          "after": {{ "oneOf": [{{ "$ref": "#/$defs/run" }}, {{ "$ref": "#/$defs/fact" }}] }},
          "expect": {{ "type": "array", "minItems": 1, "items": {{ "$ref": "#/$defs/fact" }} }},
          "fields": {{
            "type": "array",
            "items": {{
              "oneOf": [
                {{ "type": "string" }},
                {{
                  "type": "object",
                  "additionalProperties": false,
                  "required": ["name"],
                  "properties": {{
                    "name": {{ "type": "string" }},
                    "states": {{ "type": "array", "items": {{ "type": "string" }} }},
                    "numbers": {{ "type": "array", "items": {{ "oneOf": [{{ "type": "number" }}, {{ "type": "string" }}, {{ "type": "object", "properties": {{ "value": {{}}, "tolerance": {{ "type": "string" }} }} }}] }} }},
                    "actions": {{ "type": "array", "items": {{ "enum": {actions} }} }},
                    "review": {{ "type": "boolean" }}
                  }}
                }}
              ]
            }}
          }},
          "rubric": {{ "type": "array", "items": {{ "type": "string" }} }},
          "attempts": {{ "type": "integer", "minimum": 1 }},
          "retry": {{ "type": "boolean" }},
          "feedback": {{ "type": "object", "additionalProperties": {{ "type": "string" }} }},
          "leak_waiver": {{ "type": "string", "description": "why an answer shown before the question is answered is no leak" }}
        }}
      }}
    }},
    "policy": {{
      "type": "object",
      "additionalProperties": false,
      "properties": {{
        "attempts": {{ "type": "integer", "minimum": 1, "description": "choice, multi, entity and order questions (default 2)" }},
        "number_attempts": {{ "type": "integer", "minimum": 1, "description": "number and text questions (default 3)" }},
        "retry_credit": {{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$", "description": "share a right answer keeps per wrong attempt before it (default 50%)" }},
        "hint_cost": {{ "oneOf": [{{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$" }}, {{ "type": "integer", "minimum": 0 }}], "description": "per hint: a share of the question's points (default 25%) or points" }}
      }}
    }},
    "solution": {{
      "type": "object",
      "additionalProperties": false,
      "properties": {{
        "steps": {{ "type": "array", "items": {{ "type": "string" }} }},
        "answers": {{ "type": "object", "additionalProperties": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}] }} }},
        "wrong": {{ "type": "object", "additionalProperties": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}] }} }},
        "alternatives": {{ "type": "array", "items": {{ "type": "object", "additionalProperties": false, "required": ["name"], "description": "another way to work the lab: it must earn full marks too", "properties": {{
          "name": {{ "type": "string" }},
          "steps": {{ "type": "array", "items": {{ "type": "string" }} }},
          "answers": {{ "type": "object", "additionalProperties": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}] }} }}
        }} }} }},
        "mistakes": {{ "type": "array", "items": {{ "type": "object", "additionalProperties": false, "required": ["name"], "description": "a plausible wrong way: it must score at most at_most", "properties": {{
          "name": {{ "type": "string" }},
          "steps": {{ "type": "array", "items": {{ "type": "string" }} }},
          "answers": {{ "type": "object", "additionalProperties": {{ "oneOf": [{{ "type": "string" }}, {{ "type": "number" }}] }} }},
          "at_most": {{ "type": "string", "pattern": "^\\s*[0-9.]+\\s*%\\s*$", "description": "the share of the points it may earn (default 30%)" }}
        }} }} }}
      }}
    }}
  }}
}}
"##,
        levels = strings(LEVELS.iter().copied()),
        max_jobs = crate::limits::MAX_WORKLOADS,
        max_steps = crate::limits::MAX_TRAIN_ITERATIONS,
        stages = strings(STAGES.iter().copied()),
        presets = strings(preset::ids()),
        fabrics = strings(FABRICS.iter().copied()),
        fault_kinds = fault_kinds,
        port_states = strings(PORT_DOWN_STATES.iter().copied()),
        question_types = strings(QUESTION_TYPES.iter().copied()),
        entities = strings(ENTITIES.iter().copied()),
        services = strings(crate::facts::SERVICES.iter().copied()),
        run_statuses = strings(crate::lab::spec::RUN_STATUSES.iter().copied()),
        actions = strings(crate::lab::spec::HANDOFF_ACTIONS.iter().map(|(name, _)| *name)),
        repairs = strings(crate::model::change::REPAIR_ACTIONS.iter().map(|(name, _)| *name)),
        fault_rules = fault_rules.join(",\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::file;
    use super::*;

    /// The keys a schema object allows, sorted.
    fn keys(value: &serde_json::Value) -> Vec<String> {
        let mut keys: Vec<String> = value["properties"].as_object().expect("an object with properties").keys().cloned().collect();
        crate::sort::sort(&mut keys);
        keys
    }

    fn sorted(list: &[&str]) -> Vec<String> {
        let mut list: Vec<String> = list.iter().map(|k| k.to_string()).collect();
        crate::sort::sort(&mut list);
        list
    }

    #[test]
    fn the_schema_allows_exactly_the_keys_the_loader_reads() {
        let schema: serde_json::Value = serde_json::from_str(&json_schema()).expect("the schema is JSON");
        let top = &schema["properties"];
        assert_eq!(keys(&schema), sorted(file::TOP_KEYS));
        assert_eq!(keys(&top["lab"]), sorted(file::LAB_KEYS));
        assert_eq!(keys(&top["cluster"]), sorted(file::CLUSTER_KEYS));
        assert_eq!(keys(&top["vars"]["additionalProperties"]), sorted(file::VAR_KEYS));
        assert_eq!(keys(&top["faults"]["items"]), sorted(file::FAULT_KEYS));
        assert_eq!(keys(&top["jobs"]["items"]), sorted(file::JOB_KEYS));
        assert_eq!(keys(&top["pods"]["items"]), sorted(file::POD_KEYS));
        assert_eq!(keys(&top["questions"]["items"]), sorted(file::QUESTION_KEYS));
        assert_eq!(keys(&schema["$defs"]["fact"]), sorted(file::EXPECT_KEYS));
        assert_eq!(keys(&schema["$defs"]["run"]), sorted(file::RUN_KEYS));
        assert_eq!(keys(&top["policy"]), sorted(file::POLICY_KEYS));
        let field = &top["questions"]["items"]["properties"]["fields"]["items"]["oneOf"][1];
        assert_eq!(keys(field), sorted(file::FIELD_KEYS));
        assert_eq!(keys(&top["solution"]), sorted(file::SOLUTION_KEYS));
        assert_eq!(keys(&top["solution"]["properties"]["alternatives"]["items"]), sorted(file::ALTERNATIVE_KEYS));
        assert_eq!(keys(&top["solution"]["properties"]["mistakes"]["items"]), sorted(file::MISTAKE_KEYS));
    }
}
