//! Face match: the selfie of an identity journey compared with the portrait of its document,
//! offline, by the models that ship with the project (`models/`, see its NOTICE).

pub mod models;
