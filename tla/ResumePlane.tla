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
(* Seven boolean fault switches each transcribe a violation mechanism     *)
(* seen in a deployed framework (six from CONTRACT.md section 3, NoIntent  *)
(* for FI).  With all FALSE this module IS the reference semantics, and    *)
(* every property invariant holds (module Refinement: it also refines the  *)
(* abstract specification ResumeContract).                                 *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    N,           \* number of tasks
    IP,          \* the interrupt-gated task, 2 <= IP <= N
    NV,          \* number of distinct resume values; V = 1..NV
    MaxResumes,  \* resumes addressed to the interrupt checkpoint (first + later)
    MaxCrashes,  \* crash-and-recover steps
    MaxStrays,   \* stray resumes delivered to a completed run
    \* ---- fault switches (all FALSE = the reference semantics) ----------
    \* Each switch changes a mechanism, never an outcome: what a lookup is
    \* keyed by, which check runs, which durable write recovery reads.  The
    \* violation then follows from the mechanism (TLC finds it).
    Replay,          \* CrewAI @persist restore: the restored state carries
                     \* no progress, so recovery re-enters at task 1
    ForkIgnore,      \* LangGraph #6663: resume values are keyed by
                     \* (checkpoint, task), not (checkpoint, task, branch)
    InvalidPersist,  \* LangGraph #6491: the schema check before a write is
                     \* skipped
    NondetRecovery,  \* LangGraph #8039: the task record and the checkpoint's
                     \* next-task pointer are two writes racing to the store,
                     \* and recovery reads the pointer
    DoubleConsume,   \* CopilotKit #2315 class: the resume handler checks
                     \* "a resume value is recorded" instead of "the
                     \* interrupt is pending" before running the gated task
    PrefixReplay,    \* LangGraph crash path (memoised gate): recovery re-enters
                     \* at task 1 but the gate looks its answer up in the log
    NoIntent         \* the wire carries no fork/retry discriminator (FI):
                     \* the responder cannot tell a retry from a fork

ASSUME /\ N \in Nat /\ N >= 2
       /\ IP \in 2..N
       /\ NV \in Nat /\ NV >= 1
       /\ MaxResumes \in Nat /\ MaxResumes >= 1
       /\ MaxCrashes \in Nat /\ MaxStrays \in Nat
       /\ \A s \in {Replay, ForkIgnore, InvalidPersist, NondetRecovery,
                    DoubleConsume, PrefixReplay, NoIntent} : s \in BOOLEAN

Values == 1..NV
None   == 0                 \* "no value consumed yet"
Out(v) == v + NV            \* f: injective and never the identity, so FD is a
                            \* routing property, not v = v
Done   == N + 1             \* program counter of a completed run
Max(a, b) == IF a >= b THEN a ELSE b

\* What a caller means by a resume at the interrupt checkpoint (CONTRACT.md FI):
\* the first answer, a FORK (a new branch with a new value) or a RETRY (a
\* re-delivery of the answer already given).
Intents == {"answer", "fork", "retry"}

VARIABLES
    pc,         \* volatile: next task index (Done when the run completed)
    effects,    \* effects[t]: how often e_t fired (the harness's oracle)
    log,        \* durable log: sequence of [idx, valid] completion records
    frontier,   \* durable frontier F = max idx in the log (0: empty)
    pointer,    \* durable: the checkpoint's "next task" pointer (a second write)
    pending,    \* the interrupt at IP is pending (emitted, not consumed)
    consumed,   \* value consumed on the primary branch (None before)
    writes,     \* durable resume writes: a set of <<key, value>>
    resumes,    \* every resume at the interrupt checkpoint:
                \*   [v, intent (caller), tag (on the wire), out, branch]
    crashes,    \* crash-and-recover steps taken
    recHist,    \* recovery history: [f |-> frontier seen, d |-> decision]
    strays,     \* stray resumes delivered to the completed run
    reentered   \* set once execution re-enters the durable prefix

vars == <<pc, effects, log, frontier, pointer, pending, consumed, writes,
          resumes, crashes, recHist, strays, reentered>>

Init ==
    /\ pc = 1
    /\ effects = [t \in 1..N |-> 0]
    /\ log = <<>>
    /\ frontier = 0
    /\ pointer = 0
    /\ pending = FALSE
    /\ consumed = None
    /\ writes = {}
    /\ resumes = <<>>
    /\ crashes = 0
    /\ recHist = {}
    /\ strays = 0
    /\ reentered = FALSE

-----------------------------------------------------------------------------
(* Mechanisms.  Each fault switch is read in exactly one of these.         *)

\* The persistence layer checks a completion record against the state schema
\* before writing it.  The task's output may be invalid in every model (an
\* environment choice); in the reference an invalid record is refused loudly
\* (no step happens), InvalidPersist skips the check.
SchemaChecked(ok) == ok \/ InvalidPersist

\* The checkpoint's next-task pointer.  In the reference it is written in the
\* same transaction as the task record.  NondetRecovery: a second write that
\* lands on its own (LandPointer), possibly after a crash; the previous one
\* has landed by the time the next task completes.
PointerAfter(t) == IF NondetRecovery THEN frontier ELSE t

\* The key a resume value is stored and looked up under.  Reference: one key
\* per branch.  ForkIgnore: one key per (checkpoint, task), shared by forks.
Key(b) == IF ForkIgnore THEN <<IP>> ELSE <<IP, b>>
Recorded(k) == \E w \in writes : w[1] = k
Lookup(k) == (CHOOSE w \in writes : w[1] = k)[2]
\* Store v under k unless a value is recorded there; return what the gate reads.
Read(k, v) == IF Recorded(k) THEN Lookup(k) ELSE v
Store(k, v) == IF Recorded(k) THEN writes ELSE writes \cup {<<k, v>>}

\* What the resume handler checks before running the gated task for a
\* resume that arrives when the run is not parked.  Reference: the interrupt
\* must be pending.  DoubleConsume: a resume value must be recorded.
GateOpen == IF DoubleConsume THEN Recorded(Key(1)) ELSE pending

\* What goes on the wire for a caller's intent.
Wire(intent) == IF NoIntent THEN "none" ELSE intent

\* What recovery reads to decide where to continue.  Reference: the pointer
\* (equal to the frontier, one transaction).  Replay / PrefixReplay: the
\* restored state carries no progress (0).
ProgressSeen == IF Replay \/ PrefixReplay THEN 0 ELSE pointer

GateDurable == \E i \in DOMAIN log : log[i].idx = IP

-----------------------------------------------------------------------------

\* Task t completes: its effect fires (if fire), its record becomes durable.
Complete(t, ok, fire) ==
    /\ SchemaChecked(ok)
    /\ effects' = IF fire THEN [effects EXCEPT ![t] = @ + 1] ELSE effects
    /\ log' = Append(log, [idx |-> t, valid |-> ok])
    /\ frontier' = Max(frontier, t)
    /\ pointer' = PointerAfter(Max(frontier, t))
    /\ pc' = t + 1
    /\ reentered' = (reentered \/ t <= frontier)

\* Execute the next non-gated task.
Execute ==
    /\ pc <= N /\ pc # IP
    /\ \E ok \in BOOLEAN : Complete(pc, ok, TRUE)
    /\ UNCHANGED <<pending, consumed, writes, resumes, crashes, recHist, strays>>

\* Reaching IP emits the interrupt and parks the run -- unless the gate finds
\* its answer in the durable log (PrefixReplay: ServeGateFromRecord).
Interrupt ==
    /\ pc = IP /\ ~pending
    /\ ~(PrefixReplay /\ GateDurable)
    /\ pending' = TRUE
    /\ UNCHANGED <<pc, effects, log, frontier, pointer, consumed, writes, resumes,
                   crashes, recHist, strays, reentered>>

\* The resume that answers the pending interrupt: its value is stored under
\* the primary branch's key, the gate reads it back, the gated effect fires
\* once and the gated task's record becomes durable.
Consume(v) ==
    /\ pending
    /\ LET k == Key(Len(resumes) + 1)
       IN  /\ writes' = Store(k, v)
           /\ resumes' = Append(resumes, [v |-> v, intent |-> "answer", tag |-> "answer",
                                          out |-> Out(Read(k, v)), branch |-> FALSE])
    /\ pending' = FALSE
    /\ consumed' = v
    /\ \E ok \in BOOLEAN : Complete(IP, ok, TRUE)
    /\ UNCHANGED <<crashes, recHist, strays>>

\* PrefixReplay only: the re-run reaches the gate, finds its durable record and
\* serves it (no interrupt, no effect) -- the interrupt lifecycle stays
\* exactly-once while the non-gated prefix re-runs.
ServeGateFromRecord ==
    /\ PrefixReplay /\ pc = IP /\ ~pending /\ GateDurable
    /\ pc' = IP + 1
    /\ reentered' = (reentered \/ IP <= frontier)
    /\ UNCHANGED <<effects, log, frontier, pointer, pending, consumed, writes,
                   resumes, crashes, recHist, strays>>

\* A further resume addressed to the (already answered) interrupt checkpoint.
\* The caller means a FORK (any value) or a RETRY (a re-delivery of the answer
\* given, so the same value).  The responder sees only the wire: on "retry" it
\* serves the recorded outcome (no new branch, no effect); otherwise it opens a
\* new branch b, stores v under Key(b) and the gate reads Key(b) back.  The
\* branch's effect is the branch's own, not the primary run's.
LaterResume(v, intent) ==
    /\ consumed # None
    /\ Len(resumes) < MaxResumes
    /\ intent = "retry" => v = consumed
    /\ LET b   == Len(resumes) + 1
           tag == Wire(intent)
           k   == Key(b)
       IN  IF tag = "retry"
           THEN /\ resumes' = Append(resumes, [v |-> v, intent |-> intent, tag |-> tag,
                                               out |-> Out(consumed), branch |-> FALSE])
                /\ UNCHANGED writes
           ELSE /\ writes' = Store(k, v)
                /\ resumes' = Append(resumes, [v |-> v, intent |-> intent, tag |-> tag,
                                               out |-> Out(Read(k, v)), branch |-> TRUE])
    /\ UNCHANGED <<pc, effects, log, frontier, pointer, pending, consumed, crashes,
                   recHist, strays, reentered>>

Fork(v) == LaterResume(v, "fork")
Retry == LaterResume(consumed, "retry")

\* NondetRecovery only: the pointer write lands (it was handed to the store
\* before any crash, so it may land after one).
LandPointer ==
    /\ NondetRecovery /\ pointer # frontier
    /\ pointer' = frontier
    /\ UNCHANGED <<pc, effects, log, frontier, pending, consumed, writes, resumes,
                   crashes, recHist, strays, reentered>>

\* A crash erases the volatile state (pc, the parked interrupt); recovery looks
\* only at durable state -- ProgressSeen -- and records (frontier seen,
\* decision taken).  The decision is <<where to continue, whether the gate is
\* re-armed at once>>; the second component is always FALSE here (module
\* Separations varies it).
CrashRecover ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ pc' = ProgressSeen + 1
    /\ recHist' = recHist \cup {[f |-> frontier, d |-> <<ProgressSeen + 1, FALSE>>]}
    /\ pending' = FALSE
    /\ UNCHANGED <<effects, log, frontier, pointer, consumed, writes, resumes,
                   strays, reentered>>

\* A stray resume delivered to a completed run.  The handler runs the gated
\* task's body only if GateOpen; its commit is then refused (the checkpoint is
\* past the gate), so only the effect remains.  Reference: inert.
Stray ==
    /\ pc = Done /\ strays < MaxStrays
    /\ strays' = strays + 1
    /\ effects' = IF GateOpen THEN [effects EXCEPT ![IP] = @ + 1] ELSE effects
    /\ UNCHANGED <<pc, log, frontier, pointer, pending, consumed, writes, resumes,
                   crashes, recHist, reentered>>

\* A completed run idles (so TLC's deadlock check only flags runs stuck early).
Finished == pc = Done /\ UNCHANGED vars

\* Everything but crash/recovery (module Separations swaps the recovery).
Progress ==
    \/ Execute
    \/ Interrupt
    \/ \E v \in Values : Consume(v)
    \/ ServeGateFromRecord
    \/ \E v \in Values : Fork(v)
    \/ Retry
    \/ LandPointer
    \/ Stray
    \/ Finished

Next == Progress \/ CrashRecover

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

-----------------------------------------------------------------------------
(* Invariants: a type invariant and one per property of CONTRACT.md sec. 2 *)

Record == [idx : 1..N, valid : BOOLEAN]
ResumeRec == [v : Values, intent : Intents, tag : Intents \cup {"none"},
              out : Nat, branch : BOOLEAN]

TypeOK ==
    /\ pc \in 1..Done
    /\ effects \in [1..N -> Nat]
    /\ log \in Seq(Record)
    /\ frontier \in 0..N
    /\ frontier = IF log = <<>> THEN 0
                  ELSE CHOOSE m \in {log[i].idx : i \in DOMAIN log} :
                         \A i \in DOMAIN log : log[i].idx <= m
    /\ pointer \in 0..frontier
    /\ pending \in BOOLEAN
    /\ consumed \in Values \cup {None}
    /\ writes \subseteq (Seq(Nat) \X Values)
    /\ resumes \in Seq(ResumeRec)
    /\ crashes \in 0..MaxCrashes
    /\ recHist \subseteq [f : 0..N, d : (1..Done) \X BOOLEAN]
    /\ strays \in 0..MaxStrays
    /\ reentered \in BOOLEAN

\* PC: after recovery no task t <= F runs again.
PC == ~reentered

\* EO: every e_t fires at most once (exactly once with liveness).
EO == \A t \in 1..N : effects[t] <= 1

\* FD: the answer and every FORK at the interrupt checkpoint observe f of
\* their own value.  (A RETRY re-delivers the answer; CO speaks about it.)
FD == \A i \in DOMAIN resumes :
        resumes[i].intent # "retry" => resumes[i].out = Out(resumes[i].v)

\* CV: only schema-valid states become durable.
CV == \A i \in DOMAIN log : log[i].valid

\* CO: the gated effect fires at most once per interrupt: on the primary run,
\* and a RETRY is inert (no new branch running the gated task again).
CO == /\ effects[IP] <= 1
      /\ \A i \in DOMAIN resumes : resumes[i].intent = "retry" => ~resumes[i].branch

\* RD: equal durable state => equal recovery decision.
RD == \A r1, r2 \in recHist : r1.f = r2.f => r1.d = r2.d

\* FI (protocol obligation): every resume at an answered interrupt checkpoint
\* carries its caller's intent on the wire, so the responder can tell a FORK
\* from a RETRY.  (Proposition 1, module Intent: without it no responder
\* satisfies FD for forks and CO for retries together.)
FI == \A i \in DOMAIN resumes : resumes[i].tag = resumes[i].intent

-----------------------------------------------------------------------------
(* A view for state-space reduction (TLC: VIEW StateView), for the reference *)
(* semantics and safety checking only.  It forgets the order of the later   *)
(* resumes (keeping how often each record occurs) and the resume writes.   *)
(* Why sound there: in the reference every later resume opens a fresh key  *)
(* (Key(b), b = Len(resumes) + 1, never recorded before) or serves the      *)
(* recorded answer, Consume happens once and GateOpen reads pending, so    *)
(* writes and the order of later resumes never decide what is enabled or   *)
(* what a step produces; two states with equal views have successors with  *)
(* equal views (a bisimulation), and every invariant above is a function   *)
(* of the view (FD, CO and FI quantify over the records).  Not sound under *)
(* ForkIgnore or DoubleConsume (they read writes) and not used for         *)
(* liveness.                                                               *)

LaterResumes == {resumes[i] : i \in 2..Len(resumes)}
LaterBag == [r \in LaterResumes |-> Cardinality({i \in 2..Len(resumes) : resumes[i] = r})]
StateView == <<pc, effects, log, frontier, pointer, pending, consumed,
               IF resumes = <<>> THEN <<>> ELSE <<resumes[1], LaterBag>>,
               crashes, recHist, strays, reentered>>

\* LV: under weak fairness every run eventually completes.
EventuallyCompletes == <>(pc = Done)

\* ... and when it has, every effect has fired exactly once.
CompletesExactlyOnce == <>(pc = Done /\ \A t \in 1..N : effects[t] = 1)
=============================================================================
