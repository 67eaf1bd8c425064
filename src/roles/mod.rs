//! The roles of the binary. Each starts its tasks on a `JoinSet` and stops them through one
//! `CancellationToken`: SIGTERM stops intake, finishes work in flight, then the process exits 0.
pub mod gateway;
pub mod notifier;
pub mod presence;
pub mod process;
pub mod sandboxes;
pub mod worker;

/// Resolves on SIGTERM or Ctrl-C.
pub async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
