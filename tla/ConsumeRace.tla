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
(***************************************************************************)
EXTENDS Naturals

CONSTANTS K, RaceReachesEffect

ASSUME K \in Nat /\ K >= 1 /\ RaceReachesEffect \in BOOLEAN

Racers == 1..K

VARIABLES
    pending,   \* durable: the interrupt is pending (not yet consumed)
    consumes,  \* how many resumes consumed the interrupt
    effects,   \* how often the gated effect fired
    gateDone,  \* durable: the gated task's completion was claimed
    phase,     \* per racer: "idle" "read" "consumed" "ran" "refused"
    saw        \* per racer: the value of pending it read

vars == <<pending, consumes, effects, gateDone, phase, saw>>

Init ==
    /\ pending = TRUE
    /\ consumes = 0
    /\ effects = 0
    /\ gateDone = FALSE
    /\ phase = [r \in Racers |-> "idle"]
    /\ saw = [r \in Racers |-> FALSE]

\* Read: load the checkpoint and see whether the interrupt is pending.
Read(r) ==
    /\ phase[r] = "idle"
    /\ saw' = [saw EXCEPT ![r] = pending]
    /\ phase' = [phase EXCEPT ![r] = "read"]
    /\ UNCHANGED <<pending, consumes, effects, gateDone>>

\* Write: act on what was read -- no compare-and-swap with the current value.
Write(r) ==
    /\ phase[r] = "read"
    /\ IF saw[r]
       THEN /\ pending' = FALSE
            /\ consumes' = consumes + 1
            /\ phase' = [phase EXCEPT ![r] = "consumed"]
       ELSE /\ phase' = [phase EXCEPT ![r] = "refused"]
            /\ UNCHANGED <<pending, consumes>>
    /\ UNCHANGED <<effects, gateDone, saw>>

\* Run the gated task for a consumed resume.
RunGate(r) ==
    /\ phase[r] = "consumed"
    /\ phase' = [phase EXCEPT ![r] = "ran"]
    /\ IF RaceReachesEffect \/ ~gateDone
       THEN effects' = effects + 1 /\ gateDone' = TRUE
       ELSE UNCHANGED <<effects, gateDone>>
    /\ UNCHANGED <<pending, consumes, saw>>

Idle == UNCHANGED vars

Next == \/ \E r \in Racers : Read(r) \/ Write(r) \/ RunGate(r)
        \/ Idle

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

TypeOK ==
    /\ pending \in BOOLEAN /\ gateDone \in BOOLEAN
    /\ consumes \in 0..K /\ effects \in 0..K
    /\ phase \in [Racers -> {"idle", "read", "consumed", "ran", "refused"}]
    /\ saw \in [Racers -> BOOLEAN]

\* The interrupt is consumed at most once.
ConsumeCount == consumes <= 1

\* EO: the (only) effect in this model fires at most once.
EO == effects <= 1

\* CO: the gated effect fires at most once per interrupt.  In this model the
\* only effect is the gated one, so CO and EO coincide.
CO == effects <= 1
=============================================================================
