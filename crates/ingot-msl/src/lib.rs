//! Metal Shading Language front end (filled by the ingot-msl issue).
