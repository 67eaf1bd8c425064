//! `docker-compose.yml` cannot run here (no Docker engine), so it is kept correct by construction:
//! every command it runs exists in the CLI, every `SCEAU_*` variable it sets is a setting the
//! service accepts with that value, the roles share the data volume where the config says, and
//! the master key is a Compose secret mounted outside that volume.

use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

const BIN: &str = env!("CARGO_BIN_EXE_sceau");

fn compose() -> Yaml {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker-compose.yml")).expect("docker-compose.yml");
    YamlLoader::load_from_str(&text).expect("valid YAML").remove(0)
}

/// A mapping with its `<<` merge keys applied (YAML 1.1 merge, as Compose does).
fn merged(node: &Yaml) -> yaml_rust2::yaml::Hash {
    let mut out = yaml_rust2::yaml::Hash::new();
    if let Some(map) = node.as_hash() {
        if let Some(base) = map.get(&Yaml::String("<<".into())) {
            out = merged(base);
        }
        for (k, v) in map {
            if k.as_str() == Some("<<") {
                continue;
            }
            let v = if v.as_hash().is_some() { Yaml::Hash(merged(v)) } else { v.clone() };
            out.insert(k.clone(), v);
        }
    }
    out
}

fn strings(node: &Yaml) -> Vec<String> {
    node.as_vec()
        .map(|v| v.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[test]
fn compose_runs_the_roles_with_settings_the_binary_accepts() {
    let doc = compose();
    let services = doc["services"].as_hash().expect("services");
    for role in ["gateway", "worker", "notifier"] {
        let service = merged(&doc["services"][role]);
        let get = |k: &str| service.get(&Yaml::String(k.into())).cloned().unwrap_or(Yaml::BadValue);
        let command = strings(&get("command"));
        assert_eq!(command.first().map(String::as_str), Some(role), "{role} runs `sceau {role}`");
        let help = Command::new(BIN).args(&command).arg("--help").output().expect("run sceau");
        assert!(
            help.status.success(),
            "`sceau {}` does not exist: {}",
            command.join(" "),
            String::from_utf8_lossy(&help.stderr)
        );

        let env = get("environment");
        let env = env.as_hash().unwrap_or_else(|| panic!("{role} has an environment"));
        let vars: Vec<(&str, &str)> = env
            .iter()
            .map(|(k, v)| (k.as_str().expect("variable name"), v.as_str().expect("variable value")))
            .collect();
        for (k, _) in &vars {
            assert!(k.starts_with("SCEAU_"), "{role}: unexpected variable {k}");
        }
        let config = common::config::Config::from_vars(vars).unwrap_or_else(|e| panic!("{role}: {e}"));
        assert!(
            config.amqp_url.is_some() && config.redis_url.is_some(),
            "{role} runs on RabbitMQ and Redis"
        );
        let volumes = strings(&get("volumes"));
        let data = config.data_dir.display().to_string();
        assert!(
            volumes.iter().any(|v| v == &format!("sceau-data:{data}")),
            "{role} mounts the shared data volume at SCEAU_DATA_DIR ({data})"
        );
    }
    for dependency in ["rabbitmq", "redis"] {
        assert!(services.contains_key(&Yaml::String(dependency.into())), "{dependency} service");
    }
    let dockerfile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile")).expect("Dockerfile");
    assert!(dockerfile.contains("--bin sceau") && dockerfile.contains("ENTRYPOINT [\"sceau\"]"));
}

/// Where a service's secret lands: `/run/secrets/<target>` (or an absolute target), the secret's
/// name when no target is given.
fn secret_path(entry: &Yaml) -> (String, String) {
    match entry {
        Yaml::String(name) => (name.clone(), format!("/run/secrets/{name}")),
        _ => {
            let source = entry["source"].as_str().expect("a secret source").to_owned();
            let target = entry["target"].as_str().unwrap_or(&source).to_owned();
            let path = if target.starts_with('/') {
                target
            } else {
                format!("/run/secrets/{target}")
            };
            (source, path)
        }
    }
}

#[test]
fn compose_mounts_the_master_key_as_a_secret_outside_the_data_volume() {
    let doc = compose();
    let secrets = doc["secrets"].as_hash().expect("top-level secrets");
    for role in ["gateway", "worker", "notifier"] {
        let service = merged(&doc["services"][role]);
        let get = |k: &str| service.get(&Yaml::String(k.into())).cloned().unwrap_or(Yaml::BadValue);
        let environment = get("environment");
        let vars = environment
            .as_hash()
            .expect("environment")
            .iter()
            .map(|(k, v)| (k.as_str().expect("name"), v.as_str().expect("value")));
        let config = common::config::Config::from_vars(vars).expect("valid settings");
        let key = config.master_key_path().display().to_string();
        assert!(
            !config.master_key_path().starts_with(&config.data_dir),
            "{role}: the master key ({key}) is not on the data volume"
        );
        let mounted = get("secrets")
            .as_vec()
            .unwrap_or_else(|| panic!("{role} has secrets"))
            .iter()
            .map(secret_path)
            .find(|(_, path)| *path == key);
        let (source, _) = mounted.unwrap_or_else(|| panic!("{role}: SCEAU_MASTER_KEY_FILE ({key}) is a mounted secret"));
        let file = secrets
            .get(&Yaml::String(source.clone()))
            .and_then(|s| s["file"].as_str())
            .unwrap_or_else(|| panic!("secret {source} comes from a file"));
        assert!(!file.is_empty(), "{source}");
        for volume in strings(&get("volumes")) {
            let target = volume.split(':').nth(1).unwrap_or(&volume);
            assert!(!key.starts_with(target), "{role}: the key is under the volume {volume}");
        }
    }
}
