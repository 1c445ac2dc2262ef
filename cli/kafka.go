package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"engram/backend/kafka"
	"engram/query/verify"
)

// kafkaConfig is the Kafka configuration of conf; ok is false when no
// brokers are configured (the embedded default: topic files).
func kafkaConfig(conf *resolved) (cfg kafka.Config, ok bool, err error) {
	cfg.Brokers = conf.Kafka.Brokers
	if len(cfg.Brokers) == 0 {
		return cfg, false, nil
	}
	cfg.ClientID, cfg.Group = conf.Kafka.ClientID, conf.Kafka.Group
	cfg.Topics = kafka.Topics{
		Raw: conf.Kafka.TopicRaw, Enriched: conf.Kafka.TopicEnriched, Indexed: conf.Kafka.TopicIndexed,
		Audit: conf.Kafka.TopicAudit, Rejected: conf.Kafka.TopicRejected, Feedback: conf.Kafka.TopicFeedback,
	}
	proto := conf.Kafka.SecurityProtocol
	cfg.TLS = kafka.TLS{
		Enabled: conf.Kafka.TLS || proto == "SSL" || proto == "SASL_SSL",
		CAFile:  conf.Kafka.CAFile, CAPEM: conf.Kafka.CAPEM,
		CertFile: conf.Kafka.CertFile, CertPEM: conf.Kafka.CertPEM,
		KeyFile: conf.Kafka.KeyFile, KeyPEM: conf.Kafka.KeyPEM,
	}
	cfg.Compression = conf.Kafka.Compression
	cfg.SASL = kafka.SASL{Mechanism: conf.Kafka.SASLMechanism, User: conf.Kafka.SASLUsername, Password: conf.Kafka.SASLPassword}
	cfg.Registry = kafka.SchemaRegistry{URL: conf.Kafka.SchemaRegistryURL, User: conf.Kafka.SchemaRegistryUsername, Password: conf.Kafka.SchemaRegistryPassword,
		CAFile: conf.Kafka.SchemaRegistryCAFile}
	if strings.HasPrefix(proto, "SASL_") && cfg.SASL.Mechanism == "" {
		return cfg, true, errors.New("kafka.security_protocol " + proto + " needs kafka.sasl_mechanism (KAFKA_SASL_MECHANISM)")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, true, errors.New(conf.redact(err.Error()))
	}
	return cfg, true, nil
}

// kafkaCheckTimeout bounds the start-up check of the brokers and topics.
const kafkaCheckTimeout = 15 * time.Second

// resolveKafka resolves the settings of a command that cannot run without
// Kafka.
func resolveKafka(c *common, fs *flag.FlagSet, e *env, command string) (*resolved, kafka.Config, error) {
	conf, err := c.resolve(fs, e.getenv)
	if err != nil {
		return nil, kafka.Config{}, err
	}
	cfg, ok, err := kafkaConfig(conf)
	if err == nil && !ok {
		err = fmt.Errorf("%s needs Kafka: set kafka.brokers (--kafka-brokers or KAFKA_BROKERS)", command)
	}
	return conf, cfg, err
}

// checkTopics checks, within kafkaCheckTimeout, that the brokers answer and
// the topics exist: one line naming the broker and the fix otherwise.
func checkTopics(ctx context.Context, c *kafka.Client, conf *resolved, topics ...string) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaCheckTimeout)
	defer cancel()
	if err := c.CheckTopics(ctx, topics...); err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	return nil
}

// openKafkaPublisher connects the notifications to Kafka and checks, once,
// that the brokers answer and the topics exist (engram never creates them
// in a deployment: engram kafka create-topics does, when asked).
func openKafkaPublisher(ctx context.Context, cfg kafka.Config, conf *resolved) (*kafka.Publisher, error) {
	p, err := kafka.NewPublisher(cfg)
	if err != nil {
		return nil, errors.New(conf.redact(err.Error()))
	}
	topics := []string{cfg.Topics.Enriched, cfg.Topics.Indexed}
	if cfg.Topics.Audit != "" {
		topics = append(topics, cfg.Topics.Audit)
	}
	if err := checkTopics(ctx, p.Client(), conf, topics...); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// kafkaTopicSources reads the notification topics for verify.
func kafkaTopicSources(cfg kafka.Config) []verify.TopicSource {
	var out []verify.TopicSource
	for _, name := range []string{cfg.Topics.Enriched, cfg.Topics.Indexed} {
		out = append(out, verify.TopicSource{Name: name, Scan: func(ctx context.Context, fn func(verify.Notice) error) error {
			return kafka.Scan(ctx, cfg, name, func(r *kafka.Record) error {
				n := verify.Notice{Where: fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset)}
				var v struct {
					EventID string `json:"eventId"`
					Key     string `json:"objectStorageKey"`
				}
				switch err := json.Unmarshal(r.Value, &v); {
				case r.DecodeErr != nil: // Avro that could not be decoded, and why
					n.Err = r.DecodeErr
				case err != nil:
					n.Err = errors.New("not a JSON notification")
				case v.EventID == "" || v.EventID != string(r.Key):
					n.Err = fmt.Errorf("eventId %q does not match the key %q", v.EventID, r.Key)
				}
				n.EventID, n.Key = v.EventID, v.Key
				return fn(n)
			})
		}})
	}
	return out
}

type kafkaOpts struct {
	common
	partitions  int
	replication int
}

func kafkaFlags(e *env) (*flag.FlagSet, *kafkaOpts) {
	o := &kafkaOpts{}
	fs := newFlagSet("kafka", e)
	o.common.bind(fs)
	fs.IntVar(&o.partitions, "partitions", 0, "partitions of every topic created (0: as the source system has them: 12 raw and enriched, 6 indexed and rejected, 12 audit)")
	fs.IntVar(&o.replication, "replication", 1, "replication factor of the topics created (the source system runs 3 in production)")
	return fs, o
}

// runKafka is `engram kafka create-topics`: the one way engram creates
// topics in a deployment, and only when asked.
func runKafka(ctx context.Context, e *env, args []string) error {
	fs, o := kafkaFlags(e)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "create-topics" {
		fmt.Fprintln(e.stderr, "usage: engram kafka create-topics [--partitions N] [--replication R]")
		return errUsage
	}
	conf, kcfg, err := resolveKafka(&o.common, fs, e, "kafka create-topics")
	if err != nil {
		return err
	}
	c, err := kafka.New(kcfg)
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	defer c.Close()
	specs := kcfg.TopicSpecs()
	for i := range specs {
		if o.partitions > 0 {
			specs[i].Partitions = int32(o.partitions)
		}
	}
	created, err := c.CreateTopics(ctx, specs, int16(o.replication))
	for _, s := range specs {
		state := "exists"
		if slices.Contains(created, s.Name) {
			state = fmt.Sprintf("created (%d partitions, retention %s)", s.Partitions, s.Retention)
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", safeLine(s.Name), state)
	}
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	return nil
}

// topicFlagSet says whether args ask tail for a Kafka topic.
func topicFlagSet(fs *flag.FlagSet, args []string) bool {
	for _, a := range args {
		if a == "--topic" || a == "-topic" || strings.HasPrefix(a, "--topic=") || strings.HasPrefix(a, "-topic=") {
			return true
		}
	}
	return false
}

// runTailTopic prints each new message of a topic as one JSON line.
func runTailTopic(ctx context.Context, e *env, fs *flag.FlagSet, o *queryOpts, args []string) error {
	if err := parseNone(fs, args, e); err != nil {
		return err
	}
	conf, cfg, err := resolveKafka(&o.common, fs, e, "tail --topic")
	if err != nil {
		return err
	}
	topic := map[string]string{"raw": cfg.Topics.Raw, "enriched": cfg.Topics.Enriched, "indexed": cfg.Topics.Indexed,
		"audit": cfg.Topics.Audit, "rejected": cfg.Topics.Rejected, "feedback": cfg.Topics.Feedback}[o.topic]
	if topic == "" {
		topic = o.topic
	}
	w, err := kafka.NewWatch(ctx, cfg, kafka.WatchOptions{Topics: []string{topic}, From: kafka.FromEnd})
	if err != nil {
		return errors.New(conf.redact(err.Error()))
	}
	defer w.Close()
	out := tailOutage(e, conf.redact, fmt.Sprintf("Kafka (brokers %s, topic %s)", strings.Join(cfg.Brokers, ","), topic))
	for n := 0; o.limit <= 0 || n < o.limit; {
		recs, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && len(recs) == 0 && out.Down() {
			err = recheckTopics(ctx, cfg, topic)
		}
		if err != nil {
			// The watch goes on from where it was once the broker is
			// back: nothing produced meanwhile is skipped.
			if kafka.Fatal(err) {
				return errors.New(conf.redact(err.Error()))
			}
			if !out.Failed(ctx, err) {
				return nil
			}
			continue
		}
		out.OK()
		for _, r := range recs {
			if err := writeJSON(e.stdout, messageJSON(r)); err != nil {
				return err
			}
			if n++; o.limit > 0 && n >= o.limit {
				break
			}
		}
	}
	return nil
}

// topicMessage is a Kafka message as tail --topic prints it; a value that
// is JSON is shown as JSON, any other as a string.
type topicMessage struct {
	Topic     string            `json:"topic"`
	Partition int32             `json:"partition"`
	Offset    int64             `json:"offset"`
	Timestamp time.Time         `json:"timestamp"`
	Key       string            `json:"key"`
	Size      int               `json:"size"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Format "avro" for the schema registry's wire format (Value is then
	// the decoded event, SchemaID its schema; Error says why a value could
	// not be decoded, and Value is then the stored bytes as a string).
	Format   string `json:"format,omitempty"`
	SchemaID int    `json:"schemaId,omitempty"`
	Error    string `json:"error,omitempty"`
	Value    any    `json:"value"`
}

func messageJSON(r *kafka.Record) topicMessage {
	m := topicMessage{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp, Key: string(r.Key), Size: len(r.Stored())}
	if r.Format == kafka.FormatAvro {
		m.Format, m.SchemaID = r.Format, r.SchemaID
		if r.DecodeErr != nil {
			m.Error = r.DecodeErr.Error()
		}
	}
	for _, h := range r.Headers {
		if m.Headers == nil {
			m.Headers = map[string]string{}
		}
		m.Headers[h.Key] = string(h.Value)
	}
	if json.Unmarshal(r.Value, &m.Value) != nil {
		m.Value = string(r.Value)
	}
	return m
}
