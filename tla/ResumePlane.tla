----------------------------- MODULE ResumePlane -----------------------------
(***************************************************************************)
(* The resume plane of the Resume Contract (CONTRACT.md sections 1-3).     *)
(*                                                                         *)
(* A run executes tasks 1..N in order; task t has one non-idempotent       *)
(* external effect, counted in effects[t].  Task IP is interrupt-gated:    *)
(* its effect fires only after a resume value has been consumed.           *)
(* Completing a task appends <<t, valid>> to the durable log and moves the *)
(* durable frontier.  A crash erases volatile state; recovery may look at  *)
(* the durable log only.                                                   *)
(*                                                                         *)
(* Six boolean fault switches each transcribe a violation mechanism seen   *)
(* in a deployed framework.  With all six FALSE this module IS the         *)
(* reference semantics, and every property invariant holds.                *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,           \* number of tasks
    IP,          \* the interrupt-gated task, 2 <= IP <= N
    NV,          \* number of distinct resume values; V = 1..NV
    MaxResumes,  \* resumes addressed to the interrupt checkpoint (first + forks)
    MaxCrashes,  \* crash-and-recover steps
    MaxStrays,   \* stray resumes delivered to a completed run
    \* ---- fault switches (all FALSE = the reference semantics) ----
    Replay,          \* CrewAI @persist restore: recovery restarts from task 1
    ForkIgnore,      \* LangGraph #6663: a second resume at the interrupt
                     \* checkpoint is served the first resume's outcome
    InvalidPersist,  \* LangGraph #6491: a schema-invalid completion record
                     \* is persisted silently
    NondetRecovery,  \* LangGraph #8039: at equal durable state recovery may
                     \* either skip or re-execute the frontier task
    DoubleConsume,   \* CopilotKit #2315 class: a stray resume on a completed
                     \* run fires the gated effect again
    PrefixReplay     \* LangGraph crash path (memoised gate): recovery restarts
                     \* from task 1 but serves the gated task from its durable
                     \* record, so only non-gated tasks re-run

ASSUME /\ N \in Nat /\ N >= 2
       /\ IP \in 2..N
       /\ NV \in Nat /\ NV >= 1
       /\ MaxResumes \in Nat /\ MaxResumes >= 1
       /\ MaxCrashes \in Nat /\ MaxStrays \in Nat
       /\ \A s \in {Replay, ForkIgnore, InvalidPersist, NondetRecovery,
                    DoubleConsume, PrefixReplay} : s \in BOOLEAN

Values == 1..NV
None   == 0                 \* "no value consumed yet"
Out(v) == v + NV            \* f: injective and never the identity, so FD is a
                            \* routing property, not v = v
Done   == N + 1             \* program counter of a completed run
Max(a, b) == IF a >= b THEN a ELSE b

VARIABLES
    pc,         \* volatile: next task index (Done when the run completed)
    effects,    \* effects[t]: how often e_t fired (the harness's oracle)
    log,        \* durable log: sequence of [idx, valid] completion records
    frontier,   \* durable frontier F = max idx in the log (0: empty)
    pending,    \* the interrupt at IP is pending (emitted, not consumed)
    consumed,   \* value consumed on the primary branch (None before)
    resumes,    \* every resume at the interrupt checkpoint: [v, out observed]
    crashes,    \* crash-and-recover steps taken
    recHist,    \* recovery history: [f |-> frontier seen, d |-> decision]
    strays,     \* stray resumes delivered to the completed run
    reentered   \* set once execution re-enters the durable prefix

vars == <<pc, effects, log, frontier, pending, consumed, resumes, crashes,
          recHist, strays, reentered>>

Init ==
    /\ pc = 1
    /\ effects = [t \in 1..N |-> 0]
    /\ log = <<>>
    /\ frontier = 0
    /\ pending = FALSE
    /\ consumed = None
    /\ resumes = <<>>
    /\ crashes = 0
    /\ recHist = {}
    /\ strays = 0
    /\ reentered = FALSE

\* Validity of a completion record.  In the reference the persistence layer
\* validates the state first and refuses an invalid one loudly: nothing is
\* written and nothing changes (a stuttering step), so only valid records
\* are ever appended.  InvalidPersist lets an invalid record through.
Validities == IF InvalidPersist THEN BOOLEAN ELSE {TRUE}

GateDurable == \E i \in DOMAIN log : log[i].idx = IP

\* Task t completes: its effect fires (if fire), its record becomes durable.
Complete(t, ok, fire) ==
    /\ effects' = IF fire THEN [effects EXCEPT ![t] = @ + 1] ELSE effects
    /\ log' = Append(log, [idx |-> t, valid |-> ok])
    /\ frontier' = Max(frontier, t)
    /\ pc' = t + 1
    /\ reentered' = (reentered \/ t <= frontier)

\* Execute the next non-gated task.
Execute ==
    /\ pc <= N /\ pc # IP
    /\ \E ok \in Validities : Complete(pc, ok, TRUE)
    /\ UNCHANGED <<pending, consumed, resumes, crashes, recHist, strays>>

\* Reaching IP emits the interrupt and parks the run.
Interrupt ==
    /\ pc = IP /\ ~pending
    /\ ~(PrefixReplay /\ GateDurable)
    /\ pending' = TRUE
    /\ UNCHANGED <<pc, effects, log, frontier, consumed, resumes, crashes,
                   recHist, strays, reentered>>

\* The resume that answers the pending interrupt: the gated effect fires once,
\* the resume observes f(v), the gated task's record becomes durable.
Consume(v) ==
    /\ pending
    /\ pending' = FALSE
    /\ consumed' = v
    /\ resumes' = Append(resumes, [v |-> v, out |-> Out(v)])
    /\ \E ok \in Validities : Complete(IP, ok, TRUE)
    /\ UNCHANGED <<crashes, recHist, strays>>

\* PrefixReplay only: the re-run reaches the gate, finds its durable record and
\* serves it (no interrupt, no effect) -- the interrupt lifecycle stays
\* exactly-once while the non-gated prefix re-runs.
ServeGateFromRecord ==
    /\ PrefixReplay /\ pc = IP /\ ~pending /\ GateDurable
    /\ pc' = IP + 1
    /\ reentered' = (reentered \/ IP <= frontier)
    /\ UNCHANGED <<effects, log, frontier, pending, consumed, resumes, crashes,
                   recHist, strays>>

\* A further resume addressed to the (already answered) interrupt checkpoint
\* with value v: a fork.  It runs on its own branch (its effect is not the
\* primary run's) and must observe f(v).  ForkIgnore serves it f(first value).
Fork(v) ==
    /\ consumed # None
    /\ Len(resumes) < MaxResumes
    /\ resumes' = Append(resumes,
                    [v |-> v, out |-> IF ForkIgnore THEN Out(consumed) ELSE Out(v)])
    /\ UNCHANGED <<pc, effects, log, frontier, pending, consumed, crashes,
                   recHist, strays, reentered>>

\* Where recovery may continue.  Reference: the first task after the durable
\* frontier.  Replay / PrefixReplay: task 1.  NondetRecovery: F or F + 1.
Decisions ==
    IF Replay \/ PrefixReplay THEN {1}
    ELSE IF NondetRecovery /\ frontier >= 1 THEN {frontier, frontier + 1}
    ELSE {frontier + 1}

\* A crash erases the volatile state (pc, the parked interrupt); recovery looks
\* only at durable state and records (frontier seen, decision taken).  The
\* decision is <<where to continue, whether the gate is re-armed at once>>; the
\* second component is always FALSE here (module Separations varies it).
CrashRecover ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ \E d \in Decisions :
          /\ pc' = d
          /\ recHist' = recHist \cup {[f |-> frontier, d |-> <<d, FALSE>>]}
    /\ pending' = FALSE
    /\ UNCHANGED <<effects, log, frontier, consumed, resumes, strays, reentered>>

\* A stray resume delivered to a completed run: inert in the reference.
Stray ==
    /\ pc = Done /\ strays < MaxStrays
    /\ strays' = strays + 1
    /\ effects' = IF DoubleConsume THEN [effects EXCEPT ![IP] = @ + 1] ELSE effects
    /\ UNCHANGED <<pc, log, frontier, pending, consumed, resumes, crashes,
                   recHist, reentered>>

\* A completed run idles (so TLC's deadlock check only flags runs stuck early).
Finished == pc = Done /\ UNCHANGED vars

\* Everything but crash/recovery (module Separations swaps the recovery).
Progress ==
    \/ Execute
    \/ Interrupt
    \/ \E v \in Values : Consume(v)
    \/ ServeGateFromRecord
    \/ \E v \in Values : Fork(v)
    \/ Stray
    \/ Finished

Next == Progress \/ CrashRecover

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

-----------------------------------------------------------------------------
(* Invariants: a type invariant and one per property of CONTRACT.md sec. 2 *)

Record == [idx : 1..N, valid : BOOLEAN]

TypeOK ==
    /\ pc \in 1..Done
    /\ effects \in [1..N -> Nat]
    /\ log \in Seq(Record)
    /\ frontier \in 0..N
    /\ frontier = IF log = <<>> THEN 0
                  ELSE CHOOSE m \in {log[i].idx : i \in DOMAIN log} :
                         \A i \in DOMAIN log : log[i].idx <= m
    /\ pending \in BOOLEAN
    /\ consumed \in Values \cup {None}
    /\ resumes \in Seq([v : Values, out : Nat])
    /\ crashes \in 0..MaxCrashes
    /\ recHist \subseteq [f : 0..N, d : (1..Done) \X BOOLEAN]
    /\ strays \in 0..MaxStrays
    /\ reentered \in BOOLEAN

\* PC: after recovery no task t <= F runs again.
PC == ~reentered

\* EO: every e_t fires at most once (exactly once with liveness).
EO == \A t \in 1..N : effects[t] <= 1

\* FD: every resume at the interrupt checkpoint observes f of its own value.
FD == \A i \in DOMAIN resumes : resumes[i].out = Out(resumes[i].v)

\* CV: only schema-valid states become durable.
CV == \A i \in DOMAIN log : log[i].valid

\* CO: the gated effect fires at most once per interrupt.
CO == effects[IP] <= 1

\* RD: equal durable state => equal recovery decision.
RD == \A r1, r2 \in recHist : r1.f = r2.f => r1.d = r2.d

\* LV: under weak fairness every run eventually completes.
EventuallyCompletes == <>(pc = Done)

\* ... and when it has, every effect has fired exactly once.
CompletesExactlyOnce == <>(pc = Done /\ \A t \in 1..N : effects[t] = 1)
=============================================================================
