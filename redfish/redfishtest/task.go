package redfishtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

// task is an action that was answered 202: its result waits behind a task monitor.
type task struct {
	polls  int
	result *httptest.ResponseRecorder
}

func (b *BMC) startTask(w http.ResponseWriter, result *httptest.ResponseRecorder) {
	b.nextID++
	monitor := fmt.Sprintf("%s/TaskService/TaskMonitors/%d", root, b.nextID)
	b.tasks[monitor] = &task{result: result}
	w.Header().Set("Location", monitor)
	w.Header().Set("Retry-After", "0")
	writeJSON(w, http.StatusAccepted, resource{"@odata.id": monitor, "TaskState": "Running"}, nil)
}

// pollTask answers 202 for the profile's TaskPolls polls, then the action's own answer.
func (b *BMC) pollTask(w http.ResponseWriter, monitor string, t *task) {
	if t.polls < b.cfg.Profile.TaskPolls {
		t.polls++
		w.Header().Set("Retry-After", "0")
		writeJSON(w, http.StatusAccepted, resource{"@odata.id": monitor, "TaskState": "Running"}, nil)
		return
	}
	delete(b.tasks, monitor)
	for k, v := range t.result.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(t.result.Code)
	w.Write(t.result.Body.Bytes())
}
