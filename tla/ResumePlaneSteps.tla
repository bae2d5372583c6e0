--------------------------- MODULE ResumePlaneSteps ---------------------------
(***************************************************************************)
(* ResumePlane with a task step that is not atomic (an extension: the      *)
(* module ResumePlane, its switches and its published fault footprint are  *)
(* untouched).                                                             *)
(*                                                                         *)
(* In ResumePlane a task's effect and its completion record are one step   *)
(* (Complete).  Most frameworks run a step's body and then write its       *)
(* record: the effect is visible to the world before the record is         *)
(* durable, and a crash in between loses the record, so recovery runs the  *)
(* task again and its effect fires twice (the at-least-once window the     *)
(* documentation of LlamaIndex, DBOS and LangGraph states for a step that  *)
(* had not finished).  With NonAtomicStep the effect (FireEffect, or       *)
(* ConsumeEffect at the gate) and the record (WriteRecord) are two steps,  *)
(* and a crash between them loses the record (SCrashRecover).  With        *)
(* NonAtomicStep FALSE neither split step is enabled, inflight stays 0,   *)
(* and SNext is ResumePlane's Next.                                        *)
(***************************************************************************)
EXTENDS ResumePlane

CONSTANTS NonAtomicStep,    \* a task's effect and its completion record are two steps
          ConcurrentResume, \* other processes may consume the interrupt they read as pending
          MaxRacers         \* how many such processes at most

ASSUME NonAtomicStep \in BOOLEAN /\ ConcurrentResume \in BOOLEAN /\ MaxRacers \in Nat

VARIABLES inflight,      \* the task whose effect fired and whose record is not durable yet (0: none)
          racing,        \* racing[t]: racers whose next step is task t (IP: to consume)
          racers         \* racers that read the interrupt as pending

svars == <<vars, inflight, racing, racers>>

SInit == Init /\ inflight = 0 /\ racing = [t \in 1..Done |-> 0] /\ racers = 0

Racing == UNCHANGED <<racing, racers>>

\* The next non-gated task runs its body: its effect fires; its record is a later step.
FireEffect ==
    /\ NonAtomicStep /\ inflight = 0
    /\ pc <= N /\ pc # IP
    /\ effects' = [effects EXCEPT ![pc] = @ + 1]
    /\ inflight' = pc
    /\ UNCHANGED <<pc, log, frontier, pointer, pending, consumed, writes, resumes,
                   crashes, recHist, strays, reentered>>

\* The pending interrupt's answer is consumed (as in Consume) and the gated effect
\* fires; the gated task's record is a later step.
ConsumeEffect(v) ==
    /\ NonAtomicStep /\ inflight = 0 /\ pending
    /\ LET k == Key(Len(resumes) + 1)
       IN  /\ writes' = Store(k, v)
           /\ resumes' = Append(resumes, [v |-> v, intent |-> "answer", tag |-> "answer",
                                          out |-> Out(Read(k, v)), branch |-> FALSE])
    /\ pending' = FALSE
    /\ consumed' = v
    /\ effects' = [effects EXCEPT ![IP] = @ + 1]
    /\ inflight' = IP
    /\ UNCHANGED <<pc, log, frontier, pointer, crashes, recHist, strays, reentered>>

\* Recovery at the gate whose answer is durable (its resume write) but whose record
\* is not: the gated task runs again on the recorded answer, with no new interrupt,
\* and its effect fires again (the write that carried the answer outlived the step).
ReplayGate ==
    /\ NonAtomicStep /\ inflight = 0
    /\ pc = IP /\ ~pending /\ consumed # None /\ writes # {} /\ ~GateDurable
    /\ effects' = [effects EXCEPT ![IP] = @ + 1]
    /\ inflight' = IP
    /\ UNCHANGED <<pc, log, frontier, pointer, pending, consumed, writes, resumes,
                   crashes, recHist, strays, reentered>>

\* The in-flight task's record becomes durable: it completes as in ResumePlane,
\* its effect having fired already.
WriteRecord ==
    /\ inflight # 0 /\ pc = inflight
    /\ \E ok \in BOOLEAN : Complete(inflight, ok, FALSE)
    /\ inflight' = 0
    /\ UNCHANGED <<pending, consumed, writes, resumes, crashes, recHist, strays>>

\* A crash also loses an effect's record that was not written yet.
SCrashRecover == CrashRecover /\ inflight' = 0

\* Another process loads the checkpoint and finds the interrupt pending.
RacerRead ==
    /\ ConcurrentResume /\ pending /\ racers < MaxRacers
    /\ racers' = racers + 1
    /\ racing' = [racing EXCEPT ![IP] = @ + 1]
    /\ UNCHANGED <<vars, inflight>>

\* A racer acts on what it read: it consumes the interrupt the run has consumed
\* already (no compare-and-swap) and fires the gated effect again.
RacerConsume ==
    /\ ~pending /\ consumed # None /\ racing[IP] > 0
    /\ effects' = [effects EXCEPT ![IP] = @ + 1]
    /\ racing' = [racing EXCEPT ![IP] = @ - 1, ![IP + 1] = @ + 1]
    /\ UNCHANGED <<pc, log, frontier, pointer, pending, consumed, writes, resumes, crashes,
                   recHist, strays, reentered, inflight, racers>>

\* A racer past the gate runs its next task and fires its effect.
RacerExec(t) ==
    /\ t \in IP + 1..N /\ racing[t] > 0
    /\ effects' = [effects EXCEPT ![t] = @ + 1]
    /\ racing' = [racing EXCEPT ![t] = @ - 1, ![t + 1] = @ + 1]
    /\ UNCHANGED <<pc, log, frontier, pointer, pending, consumed, writes, resumes, crashes,
                   recHist, strays, reentered, inflight, racers>>

Racer == RacerRead \/ RacerConsume \/ \E t \in 1..N : RacerExec(t)

\* The run's steps while a step is half done: nothing else happens in it until its
\* record is written or the process dies.
Split ==
    \/ FireEffect
    \/ \E v \in Values : ConsumeEffect(v)
    \/ ReplayGate
    \/ WriteRecord
    \/ SCrashRecover

\* The run's steps leave the racers as they are; racers are other processes.
SNext ==
    \/ inflight = 0 /\ Progress /\ UNCHANGED inflight /\ Racing
    \/ Split /\ Racing
    \/ Racer

SSpec == SInit /\ [][SNext]_svars
=============================================================================
