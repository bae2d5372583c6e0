--------------------------- MODULE TraceResumePlane ---------------------------
(***************************************************************************)
(* Trace validation: is a recorded probe history a behaviour of            *)
(* ResumePlane (with the fault switches of the configuration)?             *)
(*                                                                         *)
(* In the style of "Validating Traces of Distributed Programs Against TLA+ *)
(* Specifications" (Cirstea, Kuppe, Merz et al., arXiv 2404.16075): the    *)
(* trace is a constant sequence of observations; each step of TraceNext    *)
(* either matches the next observation with the model action it records    *)
(* (and the observed values: the effect oracle's counts, the value         *)
(* consumed, the outcome a fork observed, where recovery resumed) or is an *)
(* action no history records (the pointer write landing, a memoised gate   *)
(* serving its record, an interrupt the harness did not log).              *)
(*                                                                         *)
(* Several traces are checked in one run: Init picks tid, the trace.  The  *)
(* invariant NotAccepted is violated exactly in the states where a trace   *)
(* has been matched to its end; probes/tla/trace.py runs TLC with          *)
(* -continue and reads which tids reached such a state.                    *)
(***************************************************************************)
EXTENDS ResumePlaneSteps   \* ResumePlane, a task step split in two (NonAtomicStep), racers (ConcurrentResume)

CONSTANTS Traces,      \* <<trace_1, ..., trace_k>>; a trace: <<obs_1, ..., obs_n>>
          RacerBounds  \* RacerBounds[i]: how many other processes trace i shows answering at once

\* An observation: [kind, task, v, out, at, valid, effects]
\*   kind    "exec" | "interrupt" | "consume" | "fork" | "retry" | "crash" | "stray"
\*   task    the task whose effect fired (exec)
\*   v       the resume value (consume, fork)
\*   out     the outcome observed, as Out(value) (fork, retry); 0 = not recorded
\*   at      where the recovered run continued (crash); 0 = not recorded
\*   valid   "valid" | "invalid" | "any": the completion record's schema validity
\*   effects the effect oracle's counts after the step, <<e_1, ..., e_N>>

VARIABLES tid, l

tvars == <<svars, tid, l>>

Obs == Traces[tid][l]

TraceInit == SInit /\ tid \in DOMAIN Traces /\ l = 1

EffectsAre(e) == \A t \in 1..N : effects'[t] = e[t]
Validity(o) == o.valid = "any" \/ (log'[Len(log')].valid = (o.valid = "valid"))
LastOut(o) == o.out = 0 \/ resumes'[Len(resumes')].out = o.out

\* ResumePlane's steps, none while a split step is half done; the racers stay as they are.
Plane(A) == inflight = 0 /\ A /\ UNCHANGED inflight /\ Racing

\* An effect observed with NonAtomicStep may be the first half of a split step (its
\* record is written by an unobserved WriteRecord, or lost by the crash that follows).
\* Its record is not written in this step, so an observation that states the record's
\* validity is matched by the atomic step only.  Likewise a racer's step: its records
\* are not modelled.  With ConcurrentResume an effect at the gate after the answer was
\* consumed may be another process's consume, and a later effect that process's task.
Unchecked(o) == o.valid = "any"
Match(o) ==
    \/ o.kind = "exec"      /\ pc = o.task /\ Plane(Execute) /\ Validity(o) /\ EffectsAre(o.effects)
    \/ o.kind = "exec"      /\ pc = o.task /\ (FireEffect \/ ReplayGate) /\ Racing /\ Unchecked(o)
                            /\ EffectsAre(o.effects)
    \/ o.kind = "interrupt" /\ Plane(Interrupt)
    \/ o.kind = "consume"   /\ Plane(Consume(o.v)) /\ Validity(o) /\ EffectsAre(o.effects)
    \/ o.kind = "consume"   /\ ConsumeEffect(o.v) /\ Racing /\ Unchecked(o) /\ EffectsAre(o.effects)
    \/ o.kind \in {"consume", "exec"} /\ (o.kind = "exec" => o.task = IP)
                            /\ RacerConsume /\ Unchecked(o) /\ EffectsAre(o.effects)
    \/ o.kind = "exec"      /\ RacerExec(o.task) /\ Unchecked(o) /\ EffectsAre(o.effects)
    \/ o.kind = "fork"      /\ Plane(Fork(o.v)) /\ LastOut(o)
    \/ o.kind = "retry"     /\ Plane(Retry) /\ LastOut(o)
    \/ o.kind = "crash"     /\ SCrashRecover /\ Racing /\ (o.at = 0 \/ pc' = o.at)
    \/ o.kind = "stray"     /\ Plane(Stray) /\ EffectsAre(o.effects)

\* Steps no history records.
\* A racer exists only where the history shows answers delivered at once (RacerBounds).
Unobserved ==
    \/ Plane(Interrupt \/ ServeGateFromRecord \/ LandPointer)
    \/ WriteRecord /\ Racing
    \/ RacerRead /\ racers < RacerBounds[tid]

TraceNext ==
    \/ /\ l <= Len(Traces[tid])
       /\ Match(Obs)
       /\ l' = l + 1
       /\ UNCHANGED tid
    \/ Unobserved /\ UNCHANGED <<tid, l>>

TraceSpec == TraceInit /\ [][TraceNext]_tvars

\* Violated exactly when trace tid has been matched to its end.
NotAccepted == l <= Len(Traces[tid])
=============================================================================
