//! Matrix products on Metal.
