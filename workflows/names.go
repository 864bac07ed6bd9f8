package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/retrieval"
)

// TaskQueue is the task queue every Toolsmith workflow and activity uses.
const TaskQueue = "toolsmith"

// All lists every workflow, for a worker to register and the replay test
// to hold to a recorded history each.
func All() []any {
	return []any{NovelVerbWorkflow, ExecuteToolWorkflow, RefreshModulesWorkflow, AirlockWorkflow, ScanSourcesWorkflow,
		HealthCheckWorkflow, ReindexWorkflow, GapDiscoveryWorkflow, AnalyticsWorkflow, RetrainWorkflow, BuildToolWorkflow}
}

// ProgressQuery is the query type that returns a Progress.
const ProgressQuery = "progress"

// Search attribute names (Keyword). The server registers them from SearchAttributes.
const (
	SAVerbName   = "ToolsmithVerb"
	SABranchName = "ToolsmithBranch"
	SAToolIDName = "ToolsmithToolId"
)

// Search attribute keys upserted by the workflows.
var (
	SAVerb   = temporal.NewSearchAttributeKeyKeyword(SAVerbName)
	SABranch = temporal.NewSearchAttributeKeyKeyword(SABranchName)
	SAToolID = temporal.NewSearchAttributeKeyKeyword(SAToolIDName)
)

// SearchAttributes lists the custom search attributes and their types, for
// registration on the Temporal server (operator AddSearchAttributes).
func SearchAttributes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		SAVerbName:   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SABranchName: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SAToolIDName: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
}

// Branches of NovelVerbWorkflow, in the order it tries them. The value is
// also the ToolsmithBranch search attribute and Progress.Stage.
const (
	BranchSearch       = "search"
	BranchSubstitute   = "substitute"
	BranchDecompose    = "decompose"
	BranchFindOrBuild  = "find_or_build"
	BranchNoCapability = "no_capability"
	// BranchNeedsInputs ends a run whose verb brought no inputs and whose
	// confident match has required parameters: the tool is named
	// (NovelVerbResult.Tool, MissingInputs) and nothing runs.
	BranchNeedsInputs = "needs_inputs"
)

// Statuses of Progress.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Defaults of NovelVerbOptions.
const (
	// DefaultThreshold is the cosine similarity of a close match with the
	// built-in USE-lite embedder (retrieval.DefaultSubstituteThreshold):
	// the similarity an external definition needs when the run's rule has
	// no threshold of its own (retrieval.DefaultSubstituteRule decides by
	// the decision model's confidence instead).
	DefaultThreshold = retrieval.DefaultSubstituteThreshold
	// legacyDefaultThreshold is the default of runs started before the
	// calibrated rule (workflow version "default-substitute-rule" 0).
	legacyDefaultThreshold = 0.60
	// DefaultMaxDepth bounds nesting of child NovelVerbWorkflows.
	DefaultMaxDepth = 3
	// DefaultSearchLimit is how many candidates the search returns (they
	// also become the known verbs offered to the planner).
	DefaultSearchLimit = retrieval.FulfilmentCandidates
)
