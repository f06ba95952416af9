// Command halo-env-demo drives one env session from Go, the same walk as clients/node/env-demo.js:
// list tasks, create a session on a task, click an element (found by its accessible name) by its
// bid, read the site's state, close. Prints one JSON object; exits 1 on any gRPC error, printing
// its status code.
//
//	halo-env-demo -target 127.0.0.1:50051 -task playground-signup -click "Sign up"
//	halo-env-demo -target host:50051 -ca ca.pem -token "$TOKEN"     (TLS + bearer token)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/halo-rl/halo/clients/go/halo"
	"github.com/halo-rl/halo/clients/go/halov1"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

type clicked struct {
	Bid  string `json:"bid"`
	Role string `json:"role"`
	Name string `json:"name"`
}

type taskSummary struct {
	ID               string `json:"id"`
	Site             string `json:"site"`
	Goal             string `json:"goal"`
	ReplicaAvailable bool   `json:"replica_available"`
}

type report struct {
	Tasks       int             `json:"tasks"`
	Task        taskSummary     `json:"task"`
	SessionID   string          `json:"session_id"`
	StartURL    string          `json:"start_url"`
	Clicked     clicked         `json:"clicked"`
	ActionOK    bool            `json:"action_ok"`
	ActionError string          `json:"action_error"`
	Done        bool            `json:"done"`
	Termination string          `json:"termination"`
	EnvFailure  bool            `json:"env_failure"`
	After       []string        `json:"after"`
	State       json.RawMessage `json:"state"`
	Closed      bool            `json:"closed"`
}

func main() {
	target := flag.String("target", "127.0.0.1:50051", "the env service, host:port")
	taskID := flag.String("task", "playground-signup", "task id")
	click := flag.String("click", "Sign up", "accessible name of the element to click")
	token := flag.String("token", "", "bearer token, for a service started with --auth-token")
	ca := flag.String("ca", "", "PEM file of the CA that signed the service's certificate (TLS); plaintext without")
	timeout := flag.Duration("timeout", 60*time.Second, "deadline of each call")
	flag.Parse()

	options := halo.Options{Token: *token}
	if *ca != "" {
		tls, err := credentials.NewClientTLSFromFile(*ca, "")
		if err != nil {
			fmt.Fprintf(os.Stderr, "env-demo: -ca %s: %v\n", *ca, err)
			os.Exit(2)
		}
		options.TLS = tls
	}
	out, err := run(*target, *taskID, *click, options, *timeout)
	if err != nil {
		if s, ok := status.FromError(err); ok && s.Code() != 0 {
			fmt.Fprintf(os.Stderr, "env-demo: %s: %s\n", s.Code(), s.Message())
		} else {
			fmt.Fprintf(os.Stderr, "env-demo: %v\n", err)
		}
		os.Exit(1)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	_ = encoder.Encode(out)
}

func run(target, taskID, click string, options halo.Options, timeout time.Duration) (*report, error) {
	conn, err := halo.Dial(target, options)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	env := halov1.NewEnvServiceClient(conn)
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), timeout)
	}
	observation := &halov1.ObservationOptions{SkipScreenshot: true}

	ctx, cancel := call()
	listed, err := env.ListTasks(ctx, &halov1.ListTasksRequest{})
	cancel()
	if err != nil {
		return nil, err
	}
	var task *halov1.Task
	for _, t := range listed.GetTasks() {
		if t.GetId() == taskID {
			task = t
		}
	}
	if task == nil {
		return nil, fmt.Errorf("task %s is not in the registry (%d tasks)", taskID, len(listed.GetTasks()))
	}

	ctx, cancel = call()
	created, err := env.CreateSession(ctx, &halov1.CreateSessionRequest{TaskId: taskID, Observation: observation})
	cancel()
	if err != nil {
		return nil, err
	}
	sessionID := created.GetSessionId()
	closeSession := func() (bool, error) {
		ctx, cancel := call()
		defer cancel()
		closed, err := env.CloseSession(ctx, &halov1.CloseSessionRequest{SessionId: sessionID})
		return closed.GetWasOpen(), err
	}

	var element *halov1.Element
	for _, e := range created.GetObservation().GetElements() {
		if e.GetName() == click {
			element = e
			break
		}
	}
	if element == nil {
		_, _ = closeSession()
		return nil, fmt.Errorf("no element named %q on %s", click, created.GetObservation().GetUrl())
	}

	ctx, cancel = call()
	stepped, err := env.Step(ctx, &halov1.StepRequest{
		SessionId: sessionID,
		Action: &halov1.Action{
			Kind:    &halov1.Action_ClickElement{ClickElement: &halov1.ClickElement{Bid: element.GetBid()}},
			RawText: fmt.Sprintf("click(%s) from go", element.GetBid()),
		},
		Observation: observation,
	})
	cancel()
	if err != nil {
		_, _ = closeSession()
		return nil, err
	}

	ctx, cancel = call()
	state, err := env.GetState(ctx, &halov1.GetStateRequest{SessionId: sessionID})
	cancel()
	if err != nil {
		_, _ = closeSession()
		return nil, err
	}
	wasOpen, err := closeSession()
	if err != nil {
		return nil, err
	}

	after := []string{}
	for _, e := range stepped.GetObservation().GetElements() {
		if e.GetName() != "" {
			after = append(after, e.GetName())
		}
	}
	stateJSON := json.RawMessage("{}")
	if state.GetStateJson() != "" {
		stateJSON = json.RawMessage(state.GetStateJson())
	}
	return &report{
		Tasks:       len(listed.GetTasks()),
		Task:        taskSummary{ID: task.GetId(), Site: task.GetSite(), Goal: task.GetGoal(), ReplicaAvailable: task.GetReplicaAvailable()},
		SessionID:   sessionID,
		StartURL:    created.GetObservation().GetUrl(),
		Clicked:     clicked{Bid: element.GetBid(), Role: element.GetRole(), Name: element.GetName()},
		ActionOK:    stepped.GetActionOk(),
		ActionError: stepped.GetActionError(),
		Done:        stepped.GetDone(),
		Termination: stepped.GetTermination().String(),
		EnvFailure:  stepped.GetEnvFailure(),
		After:       after,
		State:       stateJSON,
		Closed:      wasOpen,
	}, nil
}
