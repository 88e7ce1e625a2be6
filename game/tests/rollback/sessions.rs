//! The ggrs sessions (filled in once snapshots land).
