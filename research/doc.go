// Package research implements research digests: the DigestPayload v1.0 schema
// (README "Research digests"; its constants in payload.go), its validator, the
// canonical source text that hashes and locators refer to, evidence locators,
// and a deterministic digest producer that needs no language model.
//
// The package does no I/O of its own, keeps no storage and reads no clock:
// Store, FileReader, SpecVersions and JournalReader are ports that others
// implement, and Service takes its clock. Every length it counts
// or checks is in Unicode code points ("characters"), never bytes.
//
// # Overview
//
//   - Canonicalize / CanonicalizePages turn raw (possibly HTML) text into the
//     canonical text; SourceTextHash and QueryHash hash it and the query.
//   - ParseLocator, NewTextIndex and VerifyLocator check "char:S-E" and
//     "page:N:char:S-E" locators against a canonical text.
//   - Validate checks a payload (JSON bytes, a decoded map or a
//     DigestPayload) and reports every violation at once.
//   - CreateDigest builds a payload from a text and a query; its output
//     always passes Validate against its own canonical text.
//   - DigestPayload encodes with encoding/json as compact JSON with sorted
//     keys (its fields are in alphabetical order).
//   - ArchiveMeta, DigestRecord and Store are the records of the archive and
//     the digest store and the port that keeps them (research/researchstore
//     implements it); the package itself does no I/O.
//   - Service is the research tool's application logic over those ports:
//     reading a call's source (text, pages, a workspace file), validating,
//     creating, storing, listing and deleting digests, the archive with its
//     retention sweep and text windows, and the linked digests of research
//     nodes. SpecItems serves the spec:<id>@<version>/… archive ids of
//     budgeted spec answers (the subtree item is specs.Subtree, the one
//     subtree walk). Errors are *core.Error (code, message, details,
//     remediation), the domain's own or the ports'; none names a tool.
//
// # Two readings of the schema, on purpose
//
// Locator offsets are into the whole canonical text, also in the paged form
// "page:N:char:S-E" (whose range must lie inside page N; not page-relative, as
// foundry-mcp's code reads them), and unknown payload fields are warnings, not
// violations (newer producers may add fields).
package research
