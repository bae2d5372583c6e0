---------------------------- MODULE ResumeContract ----------------------------
(***************************************************************************)
(* The abstract specification of the Resume Contract: what a caller may    *)
(* observe of a run that conforms, with no crash, no recovery, no durable  *)
(* log mechanics and no wire.  Tasks complete once each, in order; each    *)
(* completion fires its task's effect exactly once and makes a valid       *)
(* record durable; the interrupt-gated task IP completes only with the     *)
(* answer to its interrupt; later resumes at the interrupt checkpoint are  *)
(* FORKs (a new branch observing f of its own value) or RETRYs (served the *)
(* first outcome).  Crashes, recoveries, parked interrupts and stray       *)
(* resumes of a conforming implementation are invisible here: they must    *)
(* be stuttering steps.                                                    *)
(*                                                                         *)
(* Module Refinement checks ResumePlane's reference semantics against this *)
(* specification (TLC checks Abs!Spec as a temporal property).             *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS N, IP, NV

Values == 1..NV
None   == 0
Out(v) == v + NV

VARIABLES
    done,      \* tasks completed (the durable frontier)
    fired,     \* fired[t]: how often e_t fired
    durable,   \* the durable records, in order
    answer,    \* the answer to the interrupt (None before)
    answers    \* every resume at the interrupt checkpoint: [v, intent, out, branch]

avars == <<done, fired, durable, answer, answers>>

Init ==
    /\ done = 0
    /\ fired = [t \in 1..N |-> 0]
    /\ durable = <<>>
    /\ answer = None
    /\ answers = <<>>

Record(t) == [idx |-> t, valid |-> TRUE]

\* The next task completes (not the gated one).
Advance ==
    /\ done < N /\ done + 1 # IP
    /\ done' = done + 1
    /\ fired' = [fired EXCEPT ![done + 1] = 1]
    /\ durable' = Append(durable, Record(done + 1))
    /\ UNCHANGED <<answer, answers>>

\* The interrupt at IP is answered with v: the gated task completes with f(v).
Answer(v) ==
    /\ done + 1 = IP /\ answer = None
    /\ done' = IP
    /\ fired' = [fired EXCEPT ![IP] = 1]
    /\ durable' = Append(durable, Record(IP))
    /\ answer' = v
    /\ answers' = Append(answers, [v |-> v, intent |-> "answer", out |-> Out(v), branch |-> FALSE])

\* A fork at the answered checkpoint: its own branch observes f(v).
Fork(v) ==
    /\ answer # None
    /\ answers' = Append(answers, [v |-> v, intent |-> "fork", out |-> Out(v), branch |-> TRUE])
    /\ UNCHANGED <<done, fired, durable, answer>>

\* A retry re-delivers the answer: served the first outcome, no branch runs
\* the gated task again, nothing fires.
Retry ==
    /\ answer # None
    /\ answers' = Append(answers, [v |-> answer, intent |-> "retry", out |-> Out(answer), branch |-> FALSE])
    /\ UNCHANGED <<done, fired, durable, answer>>

Next == Advance \/ (\E v \in Values : Answer(v) \/ Fork(v)) \/ Retry

Spec == Init /\ [][Next]_avars

\* Liveness: every run completes with each effect fired exactly once.
Completes == <>(done = N /\ \A t \in 1..N : fired[t] = 1)
=============================================================================
