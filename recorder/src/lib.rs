//! Where results become records, beside the transactions of the store they run: the recorder
//! applies what workers, deadlines and the notifier report; the relay hands the outbox to the
//! queue; the sweeper releases files and images once their time has come, and forgets what
//! retention no longer keeps. The gateway's process runs them, but nothing here speaks HTTP.
pub mod relay;
pub mod results;
pub mod retention;
pub mod sweeper;

pub use results::Recorder;
