//! `docker-compose.yml` cannot run here (no Docker engine), so it is kept correct by construction:
//! every command it runs exists in the CLI, every `SCEAU_*` variable it sets is a setting the
//! service accepts with that value (credentials read from the secrets `scripts/compose-secrets`
//! makes), the roles share the data volume where the config says, the master key is a Compose
//! secret mounted outside that volume, RabbitMQ and Redis demand the passwords Sceau is given, and
//! the gateway is published on loopback only.

use crate::support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::TempDir;
use yaml_rust2::{Yaml, YamlLoader};

const BIN: &str = env!("CARGO_BIN_EXE_sceau");

/// Runs `scripts/compose-secrets` into a fresh folder; returns it.
fn made_secrets() -> TempDir {
    let dir = TempDir::new("compose-secrets");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/compose-secrets");
    let out = Command::new(script).arg(&dir.0).output().expect("run scripts/compose-secrets");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Where each secret of the file lands in a container (`/run/secrets/…`), and the file on this
/// machine that `secrets` (made by the script) holds for it.
fn secret_files(doc: &Yaml, service: &yaml_rust2::yaml::Hash, secrets: &Path) -> HashMap<String, PathBuf> {
    let mounted = service.get(&Yaml::String("secrets".into())).cloned().unwrap_or(Yaml::BadValue);
    mounted
        .as_vec()
        .map(|entries| {
            entries
                .iter()
                .map(secret_path)
                .map(|(source, path)| {
                    let file = doc["secrets"][source.as_str()]["file"].as_str().expect("a secret from a file");
                    let name = file.trim_start_matches("./secrets/");
                    (path, secrets.join(name))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `${NAME:-default}` as Compose reads it with `NAME` unset.
fn interpolated(value: &str) -> String {
    let mut out = value.to_owned();
    while let Some(start) = out.find("${") {
        let end = out[start..].find('}').map(|e| e + start).expect("a closed ${…}");
        let default = out[start + 2..end].split_once(":-").map(|(_, d)| d.to_owned()).unwrap_or_default();
        out.replace_range(start..=end, &default);
    }
    out
}

/// A role's variables, with each `SCEAU_*_FILE` credential read from the secret it names.
fn settings(doc: &Yaml, role: &str, service: &yaml_rust2::yaml::Hash, secrets: &Path) -> Vec<(String, String)> {
    let files = secret_files(doc, service, secrets);
    let env = service.get(&Yaml::String("environment".into())).cloned().unwrap_or(Yaml::BadValue);
    let env = env.as_hash().unwrap_or_else(|| panic!("{role} has an environment"));
    env.iter()
        .map(|(k, v)| {
            let k = k.as_str().expect("variable name").to_owned();
            let v = interpolated(v.as_str().expect("variable value"));
            if k.ends_with("_URL_FILE") {
                let file = files.get(&v).unwrap_or_else(|| panic!("{role}: {k}={v} is a mounted secret"));
                (k, file.display().to_string())
            } else {
                (k, v)
            }
        })
        .collect()
}

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
    let secrets = made_secrets();
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

        let vars = settings(&doc, role, &service, &secrets.0);
        for (k, v) in &vars {
            assert!(k.starts_with("SCEAU_"), "{role}: unexpected variable {k}");
            assert!(!v.contains("guest"), "{role}: {k} uses RabbitMQ's default user");
        }
        let config =
            common::config::Config::from_vars(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap_or_else(|e| panic!("{role}: {e}"));
        let (amqp, redis) = (config.amqp_url.unwrap_or_default(), config.redis_url.unwrap_or_default());
        assert!(
            amqp.starts_with("amqp://sceau:") && amqp.contains("@rabbitmq:5672"),
            "{role} runs on RabbitMQ with a password"
        );
        assert!(
            redis.starts_with("redis://:") && redis.contains("@redis:6379"),
            "{role} runs on Redis with a password"
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
    let made = made_secrets();
    let secrets = doc["secrets"].as_hash().expect("top-level secrets");
    for role in ["gateway", "worker", "notifier"] {
        let service = merged(&doc["services"][role]);
        let get = |k: &str| service.get(&Yaml::String(k.into())).cloned().unwrap_or(Yaml::BadValue);
        let vars = settings(&doc, role, &service, &made.0);
        let config = common::config::Config::from_vars(vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))).expect("valid settings");
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

/// What a file of `key = value` or `key value` lines says for `key`.
fn setting(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| {
            let rest = line.strip_prefix(key)?;
            Some(rest.trim_start_matches([' ', '=']).trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no {key} in {text:?}"))
}

#[test]
fn rabbitmq_and_redis_demand_the_passwords_sceau_is_given_and_the_gateway_listens_on_loopback() {
    let doc = compose();
    let secrets = made_secrets();
    let read = |name: &str| std::fs::read_to_string(secrets.0.join(name)).expect(name);

    // RabbitMQ reads its user from the mounted conf.d file; Sceau's URL carries that password.
    let rabbitmq = merged(&doc["services"]["rabbitmq"]);
    let files = secret_files(&doc, &rabbitmq, &secrets.0);
    let (conf, _) = files
        .iter()
        .find(|(path, _)| path.starts_with("/etc/rabbitmq/conf.d/"))
        .expect("RabbitMQ mounts its users from a secret");
    assert!(conf.ends_with(".conf"), "{conf}");
    let rabbit = read("rabbitmq.conf");
    assert_eq!(setting(&rabbit, "default_user"), "sceau");
    let pass = setting(&rabbit, "default_pass");
    assert!(pass.len() >= 24, "a long password: {pass:?}");
    assert_eq!(read("amqp-url").trim(), format!("amqp://sceau:{pass}@rabbitmq:5672/%2f"));

    // Redis is started on the mounted conf, whose requirepass is in Sceau's URL.
    let redis = merged(&doc["services"]["redis"]);
    let command = strings(redis.get(&Yaml::String("command".into())).unwrap_or(&Yaml::BadValue));
    let files = secret_files(&doc, &redis, &secrets.0);
    assert!(
        command.iter().any(|arg| files.contains_key(arg)),
        "redis-server reads a mounted secret: {command:?}"
    );
    assert!(
        !command.iter().any(|arg| arg.contains("requirepass")),
        "no password on the command line"
    );
    let redis_pass = setting(&read("redis.conf"), "requirepass");
    assert!(redis_pass.len() >= 24 && redis_pass != pass);
    assert_eq!(read("redis-url").trim(), format!("redis://:{redis_pass}@redis:6379/0"));

    // Made once: a second run keeps the passwords the services already have.
    let again = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/compose-secrets"))
        .arg(&secrets.0)
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(read("rabbitmq.conf"), rabbit);

    // Published on loopback only, unless the operator says otherwise.
    let gateway = merged(&doc["services"]["gateway"]);
    let ports = strings(gateway.get(&Yaml::String("ports".into())).unwrap_or(&Yaml::BadValue));
    assert!(!ports.is_empty());
    for port in ports {
        assert!(interpolated(&port).starts_with("127.0.0.1:"), "{port}");
    }
}
