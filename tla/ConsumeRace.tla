----------------------------- MODULE ConsumeRace -----------------------------
(***************************************************************************)
(* The cross-process consume race (lost update).  A run is parked at an    *)
(* interrupt.  Racers, each in its own process, send a resume.  Consuming  *)
(* is a read-modify-write nobody made atomic: a racer reads "interrupt     *)
(* pending" (get_tuple), then writes its resume (put_writes) without a     *)
(* compare-and-swap, so two racers can both read "pending" and both        *)
(* consume.                                                                *)
(*                                                                         *)
(*  RaceReachesEffect = FALSE  "race on consume only": the gated task's    *)
(*                     execution is still deduplicated downstream (its     *)
(*                     completion is claimed once), so the consume count   *)
(*                     breaks but EO and CO hold.                          *)
(*  RaceReachesEffect = TRUE   every consumer runs the gated task and      *)
(*                     fires its effect -> EO and CO break too (what the   *)
(*                     consume_race campaign measures in LangGraph).       *)
(*                                                                         *)
(* Two effects: the gated task's ("gate") and the task after it ("next"),  *)
(* which a racer runs after the gated task.  CO speaks about the gated     *)
(* effect only, EO about every effect.                                     *)
(***************************************************************************)
EXTENDS Naturals

CONSTANTS K, RaceReachesEffect

ASSUME K \in Nat /\ K >= 1 /\ RaceReachesEffect \in BOOLEAN

Racers == 1..K

VARIABLES
    pending,   \* durable: the interrupt is pending (not yet consumed)
    consumes,  \* how many resumes consumed the interrupt
    effects,   \* effects[e]: how often effect e fired ("gate", "next")
    gateDone,  \* durable: the gated task's completion was claimed
    nextDone,  \* durable: the next task's completion was claimed
    phase,     \* per racer: "idle" "read" "consumed" "ran" "after" "refused"
    saw        \* per racer: the value of pending it read

vars == <<pending, consumes, effects, gateDone, nextDone, phase, saw>>

Effects == {"gate", "next"}

Init ==
    /\ pending = TRUE
    /\ consumes = 0
    /\ effects = [e \in Effects |-> 0]
    /\ gateDone = FALSE
    /\ nextDone = FALSE
    /\ phase = [r \in Racers |-> "idle"]
    /\ saw = [r \in Racers |-> FALSE]

\* Read: load the checkpoint and see whether the interrupt is pending.
Read(r) ==
    /\ phase[r] = "idle"
    /\ saw' = [saw EXCEPT ![r] = pending]
    /\ phase' = [phase EXCEPT ![r] = "read"]
    /\ UNCHANGED <<pending, consumes, effects, gateDone, nextDone>>

\* Write: act on what was read -- no compare-and-swap with the current value.
Write(r) ==
    /\ phase[r] = "read"
    /\ IF saw[r]
       THEN /\ pending' = FALSE
            /\ consumes' = consumes + 1
            /\ phase' = [phase EXCEPT ![r] = "consumed"]
       ELSE /\ phase' = [phase EXCEPT ![r] = "refused"]
            /\ UNCHANGED <<pending, consumes>>
    /\ UNCHANGED <<effects, gateDone, nextDone, saw>>

\* Run the gated task for a consumed resume.  Its completion is claimed in
\* the store; without the race reaching the effect, a racer that finds the
\* claim taken does not run the body (deduplicated downstream).
RunGate(r) ==
    /\ phase[r] = "consumed"
    /\ phase' = [phase EXCEPT ![r] = "ran"]
    /\ IF RaceReachesEffect \/ ~gateDone
       THEN effects' = [effects EXCEPT !["gate"] = @ + 1] /\ gateDone' = TRUE
       ELSE UNCHANGED <<effects, gateDone>>
    /\ UNCHANGED <<pending, consumes, nextDone, saw>>

\* Continue with the task after the gate, deduplicated the same way.
RunNext(r) ==
    /\ phase[r] = "ran"
    /\ phase' = [phase EXCEPT ![r] = "after"]
    /\ IF RaceReachesEffect \/ ~nextDone
       THEN effects' = [effects EXCEPT !["next"] = @ + 1] /\ nextDone' = TRUE
       ELSE UNCHANGED <<effects, nextDone>>
    /\ UNCHANGED <<pending, consumes, gateDone, saw>>

Idle == UNCHANGED vars

Next == \/ \E r \in Racers : Read(r) \/ Write(r) \/ RunGate(r) \/ RunNext(r)
        \/ Idle

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

TypeOK ==
    /\ pending \in BOOLEAN /\ gateDone \in BOOLEAN /\ nextDone \in BOOLEAN
    /\ consumes \in 0..K /\ effects \in [Effects -> 0..K]
    /\ phase \in [Racers -> {"idle", "read", "consumed", "ran", "after", "refused"}]
    /\ saw \in [Racers -> BOOLEAN]

\* The interrupt is consumed at most once.
ConsumeCount == consumes <= 1

\* EO: every effect fires at most once.
EO == \A e \in Effects : effects[e] <= 1

\* CO: the gated effect fires at most once per interrupt.
CO == effects["gate"] <= 1
=============================================================================
