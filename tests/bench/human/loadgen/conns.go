package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "humanload/tabletopv1"
)

// A person is one player or spectator: the connection their calls and their stream use.
type person struct {
	conn *conn
	gw   pb.GatewayClient
}

type conn struct {
	cc    *grpc.ClientConn
	gw    pb.GatewayClient
	users int
}

// Pool hands out connections with up to perConn persons each: 1 is a device per person
// (what players are), more multiplexes them (what a proxy in front would do). A connection
// is dialled for its first person and closed when its last one leaves.
type Pool struct {
	target  string
	perConn int
	mu      sync.Mutex
	room    []*conn // connections with room for another person
	open    int
}

func NewPool(target string, perConn int) *Pool {
	if perConn < 1 {
		perConn = 1
	}
	return &Pool{target: target, perConn: perConn}
}

// Small buffers: a human-paced stream carries a few messages a minute, and the default
// 32 KiB read and write buffers per connection would make the generator's memory, not the
// stack's, the limit at 10,000 connections.
var dialOptions = []grpc.DialOption{
	grpc.WithTransportCredentials(insecure.NewCredentials()),
	grpc.WithReadBufferSize(8 << 10),
	grpc.WithWriteBufferSize(8 << 10),
	grpc.WithSharedWriteBuffer(true),
	grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16 << 20)),
}

// signedIn is ctx carrying a new player's session: a person signs up (a device credential
// of its own, as the web and the CLI clients make on first use) before it creates a match
// or takes a seat. One player per person: its limits are its own.
func (who *person) signedIn(ctx context.Context) (context.Context, error) {
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	session, err := who.gw.Authenticate(ctx, &pb.AuthenticateRequest{
		Credential: &pb.AuthenticateRequest_Device{
			Device: &pb.DeviceCredential{Secret: hex.EncodeToString(secret)},
		},
	})
	if err != nil {
		return nil, err
	}
	return withToken(ctx, session.GetAccessToken()), nil
}

func (p *Pool) Get() (*person, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var c *conn
	if n := len(p.room); n > 0 {
		c = p.room[n-1]
	} else {
		cc, err := grpc.NewClient(p.target, dialOptions...)
		if err != nil {
			return nil, err
		}
		c = &conn{cc: cc, gw: pb.NewGatewayClient(cc)}
		p.room = append(p.room, c)
		p.open++
	}
	c.users++
	if c.users >= p.perConn {
		p.room = p.room[:len(p.room)-1]
	}
	return &person{conn: c, gw: c.gw}, nil
}

func (p *Pool) Put(who *person) {
	if who == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := who.conn
	wasFull := c.users >= p.perConn
	c.users--
	if c.users > 0 {
		if wasFull {
			p.room = append(p.room, c)
		}
		return
	}
	for i, other := range p.room {
		if other == c {
			p.room = append(p.room[:i], p.room[i+1:]...)
			break
		}
	}
	p.open--
	go func() { _ = c.cc.Close() }()
}

func (p *Pool) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}
