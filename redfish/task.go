package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// task is what the client reads of a Task resource returned by a finished task monitor.
type task struct {
	TaskState string    `json:"TaskState"`
	Messages  []Message `json:"Messages"`
}

// followTask polls the task monitor of a 202 answer until it answers something else, and
// returns that answer. A Task that ended in Exception, Killed or Cancelled is a refusal.
func (c *Client) followTask(ctx context.Context, accepted *response) (*response, error) {
	monitor := localPath(accepted.header.Get("Location"))
	if monitor == "" {
		return nil, fmt.Errorf("%w: a task monitor Location %q that is not a path on the BMC", ErrNotRedfish, accepted.header.Get("Location"))
	}
	c.progress(StepTask, "the BMC runs it as a task: waiting for %s", monitor)
	resp := accepted
	for resp.status == http.StatusAccepted {
		// Retry-After may ask for a longer wait, never a shorter one than the poll interval:
		// "Retry-After: 0" must not turn the loop into a flood.
		wait, _ := parseRetryAfter(resp.header.Get("Retry-After"), time.Now())
		wait = max(wait, c.opts.Retry.Poll)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
		var err error
		if resp, err = c.doRetrying(ctx, request{method: http.MethodGet, path: monitor}); err != nil {
			return nil, err
		}
	}
	var t task
	if resp.status < 300 && json.Unmarshal(resp.body, &t) == nil {
		switch t.TaskState {
		case "Exception", "Killed", "Cancelled":
			return nil, &Error{Method: http.MethodGet, Path: monitor, StatusCode: resp.status, Message: "the task ended " + t.TaskState,
				ExtendedInfo: t.Messages}
		}
	}
	return resp, nil
}
