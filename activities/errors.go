package activities

import (
	"errors"
	"fmt"
	"net/http"

	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/modules"
)

// Application error types. Workflows branch on these with appErr.Type(),
// never on messages; renaming one is a behaviour change.
const (
	// ErrTypeSchemaMismatch: inputs do not fit the tool's inputSchema (missing
	// required input, type mismatch, ambiguous name) or its result breaks the
	// outputSchema. Non-retryable.
	ErrTypeSchemaMismatch = "SchemaMismatch"
	// ErrTypeToolFailed: the module ran the tool and reported failure, or
	// answered with something that is not a ToolResult. Non-retryable.
	ErrTypeToolFailed = "ToolFailed"
	// ErrTypeModuleTimeout: the module did not answer within its timeout.
	// Retryable (the idempotency key makes the retry safe).
	ErrTypeModuleTimeout = "ModuleTimeout"
	// ErrTypeModuleUnavailable: network error or HTTP 5xx/429. Retryable.
	ErrTypeModuleUnavailable = "ModuleUnavailable"
	// ErrTypeModuleRejected: the module answered HTTP 4xx. Non-retryable.
	ErrTypeModuleRejected = "ModuleRejected"
	// ErrTypeUnknownModule: the tool's module is not configured. Non-retryable.
	ErrTypeUnknownModule = "UnknownModule"
	// ErrTypeInvalidToolName: the tool name is not "module.tool". Non-retryable.
	ErrTypeInvalidToolName = "InvalidToolName"
	// ErrTypeToolNotFound: no such tool, or it is not active. Non-retryable.
	ErrTypeToolNotFound = "ToolNotFound"
	// ErrTypeForbidden: the caller may not see or execute the tool. Non-retryable.
	ErrTypeForbidden = "Forbidden"
	// ErrTypeNotExecutable: the tool has no module to run it. Non-retryable.
	ErrTypeNotExecutable = "NotExecutable"
	// ErrTypeLLMUnavailable: no language model is configured. Non-retryable.
	ErrTypeLLMUnavailable = "LLMUnavailable"
	// ErrTypeInvalidPlan: the model's plan is not valid JSON or breaks the
	// plan rules (ids, references, step count). Non-retryable.
	ErrTypeInvalidPlan = "InvalidPlan"
	// ErrTypeInvalidJudgement: the model's judgement of a substitution is
	// not valid JSON, gives no reason, or names a tool it was not offered.
	// Non-retryable: the workflow falls back to the substitution rule.
	ErrTypeInvalidJudgement = "InvalidJudgement"
	// ErrTypeInvalidInput: a workflow input is unusable (empty verb, bad
	// binding). Raised by workflows. Non-retryable.
	ErrTypeInvalidInput = "InvalidInput"
	// ErrTypeDepthLimit: a novel step would nest deeper than MaxDepth.
	// Raised by workflows. Non-retryable.
	ErrTypeDepthLimit = "DepthLimitExceeded"
	// ErrTypeCycle: a novel step's verb is already being fulfilled higher up
	// the chain. Raised by workflows. Non-retryable.
	ErrTypeCycle = "VerbCycle"
	// ErrTypePolicyRefused: an onboarded tool's approval refused the call
	// (rate limit, daily quota, budget, allowed users/roles). Non-retryable.
	ErrTypePolicyRefused = "PolicyRefused"
	// ErrTypeStepFailed: a plan step failed; the cause holds the step's own
	// error. Raised by workflows. Non-retryable.
	ErrTypeStepFailed = "StepFailed"
)

// Fail returns a non-retryable application error of the given type. The
// message carries the whole reason (no cause chain), so it reads the same in
// the Temporal UI, in API responses and in logs. It is pure: workflows use it
// too.
func Fail(errType string, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errType, nil)
}

// benign is Fail for an outcome the server expects in normal operation
// and any caller can bring about, in the SDK's benign category: a refusal
// of the caller's own inputs (they do not fit the tool's schema, the
// module answered 400 or 422, a guest's tool result is a failure:
// refusedInput, and a wrapped tool's upstream API answered so:
// upstreamRefused), or no language model configured for a step that needs
// one. The SDK logs a benign activity failure at debug instead of as
// "Activity error." at ERROR, and counts it in no failure metric: one
// ERROR line each would let any caller flood the server's log. The
// caller is answered, and the audit and the execution metrics count the
// call; workflows branch on the type, which is unchanged.
func benign(errType string, format string, args ...any) error {
	return temporal.NewApplicationErrorWithOptions(fmt.Sprintf(format, args...), errType,
		temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
}

// FailWithDetails is Fail with details attached (e.g. a workflow's partial
// result, read back with appErr.Details).
func FailWithDetails(errType string, details any, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errType, nil, details)
}

// Details decodes the details of the first application error in err's
// chain into ptr (as FailWithDetails attached them); false when there are
// none.
func Details(err error, ptr any) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.HasDetails() {
		return false
	}
	return appErr.Details(ptr) == nil
}

// retryable returns a retryable application error of the given type.
func retryable(errType string, format string, args ...any) error {
	return temporal.NewApplicationError(fmt.Sprintf(format, args...), errType)
}

// Message returns the message of the first application error in err's
// chain (without the SDK's "activity error (…)" wrapping), or err.Error().
func Message(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	return err.Error()
}

// ErrorType returns the application error type in err's chain, or "".
func ErrorType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// refusedInput reports whether a failed module result is not the tool's
// own failure, for the success rate everyone's ranking reads. A module's
// answer of 400 or 422 is its refusal of the caller's inputs: the
// caller's mistake, whoever called. A tool result with success false is
// either (an unknown currency, or "rate unavailable"): it counts for a
// caller who may teach the shared learned data (access.MayTeach: a user
// and above, whose calls are limited and audited per key), and not for a
// guest, anonymous or not, who could otherwise lower a tool's success
// rate for everyone with inputs it refuses. moduleError retries neither
// (the same inputs get the same answer). A module that cannot run answers
// 5xx, times out or answers no ToolResult: those always count.
func refusedInput(res modules.Result, caller access.Caller) bool {
	switch res.Kind {
	case modules.KindToolError:
		return !access.MayTeach(caller.Level)
	case modules.KindHTTP:
		return res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity
	}
	return false
}

// upstreamRefused reports whether a wrapped tool's failed result is not
// the tool's own failure, by refusedInput's rule for modules: the
// upstream API's answer of 400 or 422 is its refusal of the caller's
// inputs, whoever called; its other 4xx answers (404 for an id it does
// not have, say) are the tool's failure, like a module's tool result
// with success false: counted for a caller who may teach the shared
// learned data (access.MayTeach), not for a guest. The API answered
// either way, so the kit reports its status with no stage (or, when the
// answer's body is not the spec's, kit.StageResponse): the request the
// caller's inputs made was refused, whatever the body says.
func upstreamRefused(res kit.Result, caller access.Caller) bool {
	if res.Success || (res.Stage != "" && res.Stage != kit.StageResponse) {
		return false
	}
	switch {
	case res.Status == http.StatusBadRequest || res.Status == http.StatusUnprocessableEntity:
		return true
	case res.Status >= 400 && res.Status < 500:
		return !access.MayTeach(caller.Level)
	}
	return false
}

// upstreamBusy reports whether a wrapped tool's upstream API answered
// that it did not do the request this time and may later: 408 (it timed
// out waiting for the request), 429 (too many requests) or 503 (not
// available). Those are tried again, as a module's are (moduleError).
// Other 5xx answers are not: the wrapped API has no idempotency key, and
// a 500, 502 or 504 may come after the request took effect.
func upstreamBusy(res kit.Result) bool {
	if res.Success || (res.Stage != "" && res.Stage != kit.StageResponse) {
		return false
	}
	switch res.Status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}

// moduleError converts a failed modules.Result of caller's call into an
// application error; a refusal of the caller's own inputs, and a call of
// a tool whose name is malformed or whose module this deployment does
// not serve (any caller can ask for one), are benign ones (benign).
func moduleError(res modules.Result, caller access.Caller) error {
	fail := Fail
	if res.Kind == modules.KindInvalidInput || refusedInput(res, caller) {
		fail = benign
	}
	switch res.Kind {
	case modules.KindInvalidName:
		return benign(ErrTypeInvalidToolName, "%s", res.Error)
	case modules.KindUnknownModule:
		return benign(ErrTypeUnknownModule, "%s", res.Error)
	case modules.KindInvalidInput, modules.KindInvalidOutput:
		return fail(ErrTypeSchemaMismatch, "%s", res.Error)
	case modules.KindTimeout:
		return retryable(ErrTypeModuleTimeout, "%s", res.Error)
	case modules.KindNetwork:
		return retryable(ErrTypeModuleUnavailable, "%s", res.Error)
	case modules.KindHTTP:
		if res.Status >= 500 || res.Status == http.StatusTooManyRequests || res.Status == http.StatusRequestTimeout {
			return retryable(ErrTypeModuleUnavailable, "%s", res.Error)
		}
		return fail(ErrTypeModuleRejected, "%s", res.Error)
	case modules.KindCanceled:
		return fmt.Errorf("activities: execute %s: %s", res.ToolName, res.Error)
	default: // KindToolError, KindBadResponse
		return fail(ErrTypeToolFailed, "%s", res.Error)
	}
}
