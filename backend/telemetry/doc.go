// Package telemetry exports the pipeline's traces as OpenTelemetry spans over
// OTLP; it is the one package that imports the OpenTelemetry SDK. The spans
// are built from the records of the live traces on screen, so the two cannot
// disagree, and a slow collector gets them dropped and counted, never waited
// for (docs/tracing.md).
package telemetry
