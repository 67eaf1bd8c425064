//! How commands print: a JSON object with `--json`, readable lines otherwise; errors are one clear
//! line on stderr and a non-zero exit.

use serde::Serialize;
use std::process::ExitCode;

pub fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Prints `value` as JSON, or as `key: value` lines.
pub fn print<T: Serialize>(json: bool, value: &T) -> ExitCode {
    let value = match serde_json::to_value(value) {
        Ok(v) => v,
        Err(e) => return fail(&format!("cannot serialise the result: {e}")),
    };
    if json {
        println!("{value}");
    } else {
        print_human(&value, 0);
    }
    ExitCode::SUCCESS
}

fn print_human(value: &serde_json::Value, indent: usize) {
    let pad = " ".repeat(indent);
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match v {
                    serde_json::Value::Object(_) | serde_json::Value::Array(_) => {
                        println!("{pad}{k}:");
                        print_human(v, indent + 2);
                    }
                    _ => println!("{pad}{k}: {}", scalar(v)),
                }
            }
        }
        serde_json::Value::Array(items) => {
            if items.is_empty() {
                println!("{pad}(none)");
            }
            for item in items {
                match item {
                    serde_json::Value::Object(_) => {
                        println!("{pad}-");
                        print_human(item, indent + 2);
                    }
                    _ => println!("{pad}- {}", scalar(item)),
                }
            }
        }
        other => println!("{pad}{}", scalar(other)),
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".into(),
        other => other.to_string(),
    }
}
