package core

import (
	"encoding/json"

	"github.com/specd/specd/core/errcode"
)

// EnvelopeSchema returns the JSON Schema of the response-v2 envelope, success
// and failure alike; every tool publishes it as its outputSchema. It carries no
// $schema keyword (several clients reject or drop tools whose schemas carry
// one). A failure must have a string error and the error data keys; a success
// has error null.
func EnvelopeSchema() json.RawMessage { return envelopeSchemaJSON }

var envelopeSchemaJSON = mustJSON(envelopeSchema())

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func envelopeSchema() map[string]any {
	str := map[string]any{"type": "string"}
	strArr := map[string]any{"type": "array", "items": str}
	obj := map[string]any{"type": "object"}
	warning := map[string]any{
		"type":     "object",
		"required": []string{"code", "severity", "message"},
		"properties": map[string]any{
			"code":     map[string]any{"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
			"severity": map[string]any{"type": "string", "enum": []string{SeverityInfo, SeverityWarning, SeverityError}},
			"message":  str,
			"context":  obj,
		},
	}
	meta := map[string]any{
		"type":     "object",
		"required": []string{"version", "request_id", "telemetry"},
		"properties": map[string]any{
			"version":         map[string]any{"type": "string", "const": Version},
			"request_id":      map[string]any{"type": "string", "pattern": "^[a-zA-Z0-9_-]+$"},
			"warnings":        strArr,
			"warning_details": map[string]any{"type": "array", "items": warning},
			"pagination": map[string]any{
				"type":     "object",
				"required": []string{"cursor", "has_more", "page_size"},
				"properties": map[string]any{
					"cursor":      map[string]any{"type": []string{"string", "null"}},
					"has_more":    map[string]any{"type": "boolean"},
					"page_size":   map[string]any{"type": "integer", "minimum": 0},
					"total_count": map[string]any{"type": "integer", "minimum": 0},
				},
			},
			"rate_limit": map[string]any{
				"type":     "object",
				"required": []string{"limit", "remaining", "reset_seconds"},
				"properties": map[string]any{
					"limit":         map[string]any{"type": "integer"},
					"remaining":     map[string]any{"type": "integer"},
					"reset_seconds": map[string]any{"type": "integer"},
				},
			},
			"telemetry": map[string]any{
				"type":       "object",
				"required":   []string{"duration_ms"},
				"properties": map[string]any{"duration_ms": map[string]any{"type": "number", "minimum": 0}},
			},
			"content_fidelity":                map[string]any{"type": "string", "enum": []string{FidelityFull, FidelityPartial, FidelitySummary, FidelityReferenceOnly}},
			"content_fidelity_schema_version": str,
			"dropped_content_ids":             strArr,
			"content_archive_hashes": map[string]any{
				"type":                 "object",
				"additionalProperties": map[string]any{"type": "string", "pattern": "^sha256:[a-f0-9]{64}$"},
			},
			"deprecated": map[string]any{
				"type":     "object",
				"required": []string{"action", "replacement", "removal_target"},
				"properties": map[string]any{
					"action": str, "replacement": str, "removal_target": str,
				},
			},
		},
	}
	errorData := map[string]any{
		"type":     "object",
		"required": []string{"error_code", "error_type", "remediation", "details", "recovery"},
		"properties": map[string]any{
			"error_code":  map[string]any{"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
			"error_type":  map[string]any{"type": "string", "enum": []string{errcode.TypeValidation, errcode.TypeAuthentication, errcode.TypeAuthorization, errcode.TypeNotFound, errcode.TypeConflict, errcode.TypeRateLimit, errcode.TypeFeatureFlag, errcode.TypeInternal, errcode.TypeUnavailable}},
			"remediation": map[string]any{"type": "string", "minLength": 1},
			"details":     obj,
			"recovery": map[string]any{
				"type":     "object",
				"required": []string{"suggested_tool", "suggested_args", "fuzzy_matches"},
				"properties": map[string]any{
					"suggested_tool": map[string]any{"type": []string{"string", "null"}},
					"suggested_args": map[string]any{"type": []string{"object", "null"}},
					"fuzzy_matches":  map[string]any{"type": "array", "items": str, "maxItems": 5},
				},
			},
		},
	}
	return map[string]any{
		"type":                 "object",
		"title":                "response-v2 envelope",
		"additionalProperties": false,
		"required":             []string{"success", "data", "error", "meta"},
		"properties": map[string]any{
			"success": map[string]any{"type": "boolean"},
			"data":    obj,
			"error":   map[string]any{"type": []string{"string", "null"}},
			"meta":    meta,
		},
		"if": map[string]any{
			"properties": map[string]any{"success": map[string]any{"const": false}},
		},
		"then": map[string]any{
			"properties": map[string]any{"error": str, "data": errorData},
		},
		"else": map[string]any{
			"properties": map[string]any{"error": map[string]any{"type": "null"}},
		},
	}
}
