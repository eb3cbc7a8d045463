// Command review sends a diff to an A2A agent over gRPC (SendMessage) and
// prints the findings of the task's artifact, one per line:
//
//	app/users.py:18 S608 [high] Possible SQL injection vector ...
//
// Its lf/a2a/v1 package is generated from proto/ by protoc-gen-go and
// protoc-gen-go-grpc (see the README, "Generate a client in your language").
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	a2a "google.golang.org/lf/a2a/v1"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: review HOST:PORT FILE.diff")
	}
	addr, file := os.Args[1], os.Args[2]
	raw, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	// Plaintext, as `a2a-grpc serve` listens. Debian's grpc-go is 1.33; from
	// 1.34 on, say grpc.WithTransportCredentials(insecure.NewCredentials()).
	conn, err := grpc.Dial(addr, grpc.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0")
	resp, err := a2a.NewA2AServiceClient(conn).SendMessage(ctx, &a2a.SendMessageRequest{
		Message: &a2a.Message{
			MessageId: newID(),
			Role:      a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{
				Content:   &a2a.Part_Raw{Raw: raw},
				Filename:  filepath.Base(file),
				MediaType: "text/x-diff",
			}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())
	for _, artifact := range task.GetArtifacts() {
		for _, part := range artifact.GetParts() {
			findings := part.GetData().GetStructValue().GetFields()["findings"]
			for _, f := range findings.GetListValue().GetValues() {
				v := f.GetStructValue().GetFields()
				fmt.Printf("%s:%d %s [%s] %s\n", v["file"].GetStringValue(), int(v["line"].GetNumberValue()),
					v["rule"].GetStringValue(), v["severity"].GetStringValue(), v["issue"].GetStringValue())
			}
		}
	}
}

// newID returns a random UUID (version 4) for the message id.
func newID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		log.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
