package cli

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/api/ranking"
)

// TestDevSchedulesTheRetrain: once dev is ready the ranking's retrain
// schedule exists on its Temporal server, runs RetrainWorkflow on the
// analytics' cadence, and the ranking routes answer.
func TestDevSchedulesTheRetrain(t *testing.T) {
	in := startDev(t, t.TempDir(), "--no-demo", "--analytics-every", "6h")
	m := regexp.MustCompile(`Temporal (\S+) \(namespace (\S+)\)`).FindStringSubmatch(in.stdout.String())
	if m == nil {
		t.Fatalf("banner lacks the Temporal address:\n%s", in.stdout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: m[1], Namespace: m[2]})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.ScheduleClient().GetHandle(ctx, ranking.RetrainScheduleID).Describe(ctx)
	if err != nil {
		t.Fatalf("retrain schedule: %v", err)
	}
	a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || a.Workflow != "RetrainWorkflow" || len(d.Schedule.Spec.Intervals) != 1 || d.Schedule.Spec.Intervals[0].Every != 6*time.Hour {
		t.Fatalf("retrain schedule: %+v %+v", d.Schedule.Action, d.Schedule.Spec)
	}
	code, env := in.call(t, http.MethodGet, "/api/v1/admin/ranking/versions", nil, "Authorization", in.auth)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"promoted":"none"`) {
		t.Fatalf("ranking versions: %d %s", code, env.Data)
	}
}
