package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/specs/mirror"
)

// The details of the tools' own refusals and the contexts of their
// warnings, typed: core.DetailsOf renders each as the JSON object its tags
// describe (core.FieldDetail and core.TruncationContext are the shared
// ones).
type (
	// notOfferedDetail: a foundry action specd does not offer because it
	// needs a language model (notOffered).
	notOfferedDetail struct {
		Tool   string `json:"tool"`
		Action string `json:"action"`
		Reason string `json:"reason"`
	}
	// featureDetail names the feature flag that keeps an action off (the
	// details and the top-level feature key of FEATURE_DISABLED).
	featureDetail struct {
		Feature string `json:"feature"`
	}
	// settingDetail: an action an operator's server setting keeps off.
	settingDetail struct {
		Action  string `json:"action"`
		Setting string `json:"setting"`
	}
	// workspaceDetail: the server's workspace root as configured.
	workspaceDetail struct {
		Workspace string `json:"workspace"`
	}
	// storeFullDetail: the store's file and the bytes free on its disk.
	storeFullDetail struct {
		Store     string `json:"store"`
		FreeBytes uint64 `json:"free_bytes"`
	}
	// writeLockDetail: the autonomy session whose write lock refused a
	// write (BypassAllowed: nil when the write cannot be bypassed).
	writeLockDetail struct {
		SpecID        string `json:"spec_id"`
		SessionID     string `json:"session_id"`
		SessionStatus string `json:"session_status"`
		Action        string `json:"action"`
		BypassAllowed *bool  `json:"bypass_allowed,omitempty"`
	}
	// fieldsDetail: a refusal about an object argument, with the fields it
	// takes.
	fieldsDetail struct {
		core.FieldDetail
		Fields []string `json:"fields"`
	}
	// replacedDetail: a removed action, with the call that replaced it.
	replacedDetail struct {
		core.FieldDetail
		Replacement     string         `json:"replacement"`
		ReplacementArgs map[string]any `json:"replacement_args"`
	}
	// batchFailureContext: PARTIAL_FAILURE of a batch.
	batchFailureContext struct {
		Failed int `json:"failed"`
		Total  int `json:"total"`
	}
	// errorCodeContext: a warning about a failure, by its code.
	errorCodeContext struct {
		ErrorCode string `json:"error_code"`
	}
	// mirrorFailedContext: MIRROR_FAILED.
	mirrorFailedContext struct {
		Dir       string `json:"dir"`
		ErrorCode string `json:"error_code"`
	}
	// mirrorConflictContext: MIRROR_CONFLICT.
	mirrorConflictContext struct {
		Dir       string            `json:"dir"`
		Files     []string          `json:"files"`
		Conflicts []mirror.Conflict `json:"conflicts"`
	}
	// taskContext: a warning about one task.
	taskContext struct {
		TaskID string `json:"task_id"`
	}
	// timeoutContext: VERIFY_TIMED_OUT.
	timeoutContext struct {
		TimeoutSeconds int `json:"timeout_seconds"`
	}
	// actionContext: a warning about the action that answered.
	actionContext struct {
		Action string `json:"action"`
	}
	// digestSizeContext: a digest that could not be made shorter than its
	// source (what was shortened instead).
	digestSizeContext struct {
		OriginalChars int      `json:"original_chars"`
		DigestChars   int      `json:"digest_chars"`
		Shortened     []string `json:"shortened"`
	}
	// hashMismatchContext: content whose hash is not the one expected.
	hashMismatchContext struct {
		ExpectedHash string `json:"expected_hash"`
		Hash         string `json:"hash"`
	}
)

// notOffered is the details of tool action's NOT_SUPPORTED refusal for
// needing a language model.
func notOffered(tool, action string) notOfferedDetail {
	return notOfferedDetail{Tool: tool, Action: action, Reason: "needs_language_model"}
}

// warnOf is a warning whose context is ctx, a typed context (core.DetailsOf).
func warnOf(code, message string, ctx any) core.MetaOption {
	return warn(code, message, core.DetailsOf(ctx))
}
