// Package flags evaluates specd's feature flags (named in flags/registry)
// through OpenFeature with the flagd provider (file mode by default, a real
// flagd for a fleet): the per-session decision of the response contract,
// the gates, and rollout health counts.
//
// *Service implements core/mcptool's Flags interface directly, so the tool
// framework asks it with its own FlagContext and gets FlagDecisions back,
// with no translation per call. Only this package imports OpenFeature.
package flags
