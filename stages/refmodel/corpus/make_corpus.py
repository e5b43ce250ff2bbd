#!/usr/bin/env python3
"""Writes the reference model's training corpus and a prompt set, deterministically.

    python3 make_corpus.py            # writes corpus.txt and prompts.jsonl beside this file
    python3 make_corpus.py --check    # exits 1 if the committed files differ from a fresh run

The corpus is chat-like text rendered with the reference chat template
(<|user|> ... <|end|> <|assistant|> [<think> ... </think>] ... <|end|>) about a small invented
world (kingdoms, cities, animals, dishes, inventors), arithmetic, advice and explanations. The
templates have many phrasings and the facts vary, so a 4-gram model trained on it has real
uncertainty at the choice points and near-certainty inside set phrases: speculative-decoding
acceptance is then neither near 0 nor near 1. prompts.jsonl holds user questions drawn from the
same generator with a different seed (conversations JSONL, no assistant turn) for lh-datagen.
Only the standard library; the output depends on nothing but this file.
"""

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s",
          "st", "t", "th", "v", "z", "sh", "qu", "el", "ar", "or"]
VOWELS = ["a", "e", "i", "o", "u", "ae", "io", "ou", "ia"]
CODAS = ["", "n", "r", "l", "s", "th", "nd", "m", "x", "ck", "ria", "dor", "vel", "mont"]

ANIMALS = ["fox", "otter", "heron", "badger", "lynx", "falcon", "beetle", "salmon", "owl",
           "hare", "wolf", "crane", "tortoise", "gecko", "moth", "whale", "seal", "ibis",
           "marten", "bison", "camel", "parrot", "lizard", "frog", "newt", "eel", "crab",
           "sparrow", "raven", "deer", "elk", "yak", "panda", "koala", "lemur", "tapir",
           "ferret", "mole", "shrew", "vole", "bat", "swan", "goose", "pelican", "stork",
           "cobra", "python", "iguana", "squid", "octopus", "jellyfish", "starfish", "bee",
           "wasp", "ant", "spider", "dragonfly", "firefly", "snail", "walrus"]
HABITATS = ["forest", "river", "desert", "mountain", "wetland", "meadow", "coast", "reef",
            "tundra", "savanna", "cave", "valley", "lake", "jungle", "marsh", "island"]
DIETS = ["insects", "fish", "seeds", "berries", "leaves", "roots", "small mammals", "grass",
         "nectar", "worms", "shellfish", "fruit", "mushrooms", "algae", "plankton", "bark"]
COLORS = ["red", "blue", "green", "golden", "silver", "grey", "black", "white", "brown",
          "amber", "violet", "orange", "pale", "dark", "spotted", "striped"]
GOODS = ["wool", "copper", "tea", "salt", "timber", "glass", "silk", "honey", "iron", "wine",
         "cheese", "paper", "spices", "pottery", "marble", "amber", "rice", "wheat", "olives",
         "leather", "tin", "coffee", "cotton", "dates", "furs", "pearls"]
CLIMATES = ["cold", "mild", "warm", "dry", "humid", "windy", "rainy", "snowy", "temperate",
            "foggy"]
LANDS = ["kingdom", "republic", "duchy", "empire", "federation", "principality", "city state",
         "island nation", "confederacy"]
TRADES = ["astronomer", "engineer", "painter", "physician", "poet", "mapmaker", "chemist",
          "architect", "composer", "botanist", "mathematician", "sculptor", "philosopher",
          "navigator", "weaver", "inventor", "historian", "geologist"]
INVENTIONS = ["water clock", "printing press", "telescope", "steam pump", "compass",
              "loom", "windmill", "lens grinder", "calendar", "star chart", "bridge design",
              "canal lock", "pendulum", "barometer", "seed drill", "glass kiln", "music box",
              "signal lamp", "abacus", "sundial", "paper mill", "rope bridge", "sailing map",
              "thermometer"]
DISHES = ["soup", "stew", "bread", "pie", "porridge", "salad", "dumplings", "flatbread",
          "noodles", "risotto", "curry", "pancakes", "omelette", "casserole", "tart",
          "chowder", "roast", "fritters"]
INGREDIENTS = ["onion", "garlic", "carrot", "potato", "leek", "barley", "lentils", "beans",
               "mushrooms", "tomato", "pepper", "cabbage", "spinach", "pumpkin", "apple",
               "pear", "butter", "cream", "eggs", "flour", "rice", "honey", "thyme", "rosemary",
               "ginger", "lemon", "cheese", "milk", "peas", "corn", "celery", "parsley"]
METHODS = ["chop", "slice", "stir", "simmer", "bake", "roast", "boil", "fry", "mix", "knead",
           "whisk", "season", "grate", "mash", "fold", "steam", "toast", "rest"]
TOPICS_ADVICE = {
    "sleep better": [
        "keep a regular bedtime, even on weekends",
        "avoid bright screens in the hour before bed",
        "keep the bedroom cool, dark and quiet",
        "limit coffee and tea after the early afternoon",
        "get some daylight in the morning",
        "write down worries before bed so they do not keep you awake",
        "use the bed only for sleep and rest",
        "take a short walk in the evening",
        "avoid heavy meals late at night",
        "try a slow breathing exercise when you lie down",
    ],
    "learn a new language": [
        "practice a little every day instead of a lot once a week",
        "learn the most common words first",
        "listen to simple stories and songs",
        "speak out loud, even when you make mistakes",
        "find a partner to talk with each week",
        "keep a small notebook of new phrases",
        "read short texts that you find interesting",
        "review old words at growing intervals",
        "label things around your home",
        "watch films with subtitles in the new language",
    ],
    "save money": [
        "write down what you spend for one month",
        "set a budget for food, rent and travel",
        "cook at home more often",
        "cancel subscriptions that you do not use",
        "wait a day before any large purchase",
        "put a fixed share of income aside when you are paid",
        "compare prices before you buy",
        "repair things instead of replacing them",
        "buy in bulk when it makes sense",
        "keep a small emergency fund",
    ],
    "study for an exam": [
        "start early and plan your weeks",
        "test yourself instead of only reading",
        "explain each topic in your own words",
        "take short breaks every hour",
        "sleep well the night before",
        "work through old exam questions",
        "study the hardest topics when you are most awake",
        "make a short summary of each chapter",
        "study with a friend and quiz each other",
        "keep your desk tidy and your phone away",
    ],
    "keep a garden healthy": [
        "water early in the morning",
        "add compost to the soil each spring",
        "rotate crops from year to year",
        "remove weeds while they are small",
        "plant flowers that attract bees",
        "check leaves for pests every week",
        "mulch the beds to keep moisture in",
        "prune dead branches in late winter",
        "choose plants that suit your climate",
        "give seedlings enough space to grow",
    ],
    "write clearer code": [
        "give variables and functions clear names",
        "keep each function short and focused",
        "write tests for the behaviour you care about",
        "remove code that is no longer used",
        "handle errors where you can act on them",
        "avoid deep nesting of conditions",
        "write comments that explain why, not what",
        "keep related code close together",
        "prefer simple data structures",
        "review your own change before you ask others",
    ],
    "stay focused at work": [
        "plan the three most important tasks each morning",
        "turn off notifications for an hour at a time",
        "work in short blocks with breaks between them",
        "keep a list of distractions to handle later",
        "tidy your desk at the end of the day",
        "say no to meetings without a clear goal",
        "drink enough water",
        "take a walk after lunch",
        "finish one task before you start the next",
        "keep your phone in another room",
    ],
    "run a first marathon": [
        "build up your weekly distance slowly",
        "do one long run every week",
        "rest at least one day each week",
        "practice eating and drinking while you run",
        "buy shoes that fit well and break them in",
        "run most of your miles at an easy pace",
        "reduce training in the last two weeks",
        "start the race slower than you think you should",
        "stretch and walk after each run",
        "sleep well during the weeks of training",
    ],
}
CONCEPTS = {
    "a hash table": ("a data structure that maps keys to values",
                     "it computes a hash of each key and uses it to pick a bucket",
                     "lookups take constant time on average"),
    "a binary search": ("a way to find an item in a sorted list",
                        "it compares the middle item with the target and discards half the list",
                        "it needs only a logarithmic number of steps"),
    "recursion": ("a function that calls itself on a smaller problem",
                  "each call works on a part of the input until it reaches a base case",
                  "many tree and list problems become short and clear"),
    "a linked list": ("a chain of nodes where each node points to the next",
                      "you follow the pointers from the head to reach an item",
                      "inserting an item in the middle is cheap"),
    "a queue": ("a collection where items leave in the order they arrived",
                "you add items at the back and remove them from the front",
                "it is the natural model for waiting lines and message buffers"),
    "a stack": ("a collection where the last item added is the first removed",
                "you push items on top and pop them from the top",
                "it tracks nested calls and undo history"),
    "a cache": ("a small fast store that keeps recent results",
                "it answers repeated requests without redoing the work",
                "it hides the cost of a slow source"),
    "a mutex": ("a lock that lets one thread at a time use shared data",
                "a thread takes the lock, works, and releases it",
                "it prevents two threads from corrupting the same data"),
    "photosynthesis": ("the process by which plants make sugar from light",
                       "leaves capture sunlight and combine water with carbon dioxide",
                       "it feeds almost every food chain and releases oxygen"),
    "evaporation": ("the change of a liquid into a gas",
                    "molecules at the surface gain enough energy to escape",
                    "it drives the water cycle and cools our skin"),
    "gravity": ("the force that pulls masses toward each other",
                "every mass attracts every other mass, more strongly when they are close",
                "it keeps planets in orbit and our feet on the ground"),
    "friction": ("the force that resists sliding between surfaces",
                 "rough contact points catch on each other and turn motion into heat",
                 "it lets us walk and lets brakes stop a wheel"),
    "erosion": ("the slow wearing away of rock and soil",
                "wind, water and ice carry small pieces away over many years",
                "it carves valleys and shapes coastlines"),
    "a volcano": ("an opening where molten rock reaches the surface",
                  "pressure from hot magma below pushes it up through cracks",
                  "it builds mountains and new land"),
    "inflation": ("a general rise in prices over time",
                  "when money grows faster than goods, each coin buys less",
                  "it changes the value of savings and wages"),
    "a vaccine": ("a preparation that trains the body to fight a disease",
                  "it shows the immune system a harmless piece of the germ",
                  "it prevents illness before it starts"),
    "compound interest": ("interest earned on earlier interest",
                          "each period adds interest to the balance, and the next period counts it too",
                          "small savings grow large over many years"),
    "a rainbow": ("an arc of colors in the sky",
                  "sunlight bends inside raindrops and splits into its colors",
                  "it shows that white light holds many colors"),
    "an eclipse": ("the hiding of one body by the shadow of another",
                   "the moon passes between the sun and the earth, or the earth shades the moon",
                   "it lets astronomers study the outer layers of the sun"),
    "a lever": ("a rigid bar that turns around a fixed point",
                "a small force far from the point moves a large load close to it",
                "it multiplies force in tools from scissors to cranes"),
    "sorting": ("putting items in a chosen order",
                "an algorithm compares items and moves them until they are in order",
                "sorted data is faster to search and easier to read"),
    "an index in a database": ("a structure that speeds up lookups by a column",
                               "it keeps the column values sorted with pointers to the rows",
                               "queries avoid reading the whole table"),
    "a compiler": ("a program that turns source code into machine code",
                   "it parses the text, checks it, and generates instructions",
                   "programs run fast without an interpreter"),
    "tides": ("the regular rise and fall of the sea",
              "the pull of the moon and the sun raises bulges of water",
              "they shape coasts and the life along them"),
}
OPENERS = ["Sure.", "Of course.", "Good question.", "Happy to help.", "Here is a short answer.",
           "Certainly.", "Let me explain.", "Great question."]
CLOSERS = ["I hope this helps.", "Let me know if you want more detail.",
           "Feel free to ask a follow-up question.", "Good luck!", "",
           "", "", "Is there anything else you would like to know?"]
THINK_STARTS = ["The user asks about", "The question is about", "I need to answer a question about",
                "Okay, the user wants to know about", "Let me think about"]
THINK_ENDS = ["I should give a clear and short answer.", "I will answer directly.",
              "Now I can write the answer.", "That should be enough to answer.",
              "I will keep the answer simple."]


def make_name(rng, syllables):
    parts = [rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(syllables)]
    name = "".join(parts) + rng.choice(CODAS)
    return name.capitalize()


class World:
    """A small invented world whose facts the questions and answers talk about."""

    def __init__(self, rng):
        names = set()

        def fresh(syl):
            while True:
                n = make_name(rng, syl)
                if n not in names and len(n) > 3:
                    names.add(n)
                    return n

        self.lands = []
        for _ in range(60):
            land = {
                "name": fresh(2),
                "kind": rng.choice(LANDS),
                "capital": fresh(2),
                "river": fresh(2),
                "export": rng.choice(GOODS),
                "climate": rng.choice(CLIMATES),
                "founded": rng.randint(600, 1800),
                "ruler": fresh(2),
                "cities": [fresh(rng.choice([2, 3])) for _ in range(3)],
                "population": rng.choice([2, 3, 4, 5, 6, 8, 9, 12, 15, 20, 25, 40]),
            }
            self.lands.append(land)
        self.creatures = []
        for animal in ANIMALS:
            self.creatures.append({
                "animal": animal,
                "habitat": rng.choice(HABITATS),
                "diet": rng.choice(DIETS),
                "color": rng.choice(COLORS),
                "lifespan": rng.randint(2, 60),
                "land": rng.choice(self.lands)["name"],
            })
        self.people = []
        for _ in range(80):
            self.people.append({
                "name": fresh(2) + " " + fresh(2),
                "trade": rng.choice(TRADES),
                "invention": rng.choice(INVENTIONS),
                "year": rng.randint(900, 1900),
                "land": rng.choice(self.lands)["name"],
            })
        self.recipes = []
        for _ in range(40):
            dish = rng.choice(DISHES)
            ingredients = rng.sample(INGREDIENTS, rng.randint(3, 6))
            self.recipes.append({
                "dish": ingredients[0] + " " + dish,
                "ingredients": ingredients,
                "minutes": rng.choice([10, 15, 20, 25, 30, 40, 45, 60, 90]),
                "land": rng.choice(self.lands)["name"],
            })


def join_list(items):
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def q_capital(rng, w):
    land = rng.choice(w.lands)
    q = rng.choice([
        f"What is the capital of {land['name']}?",
        f"Which city is the capital of {land['name']}?",
        f"Tell me the capital of {land['name']}.",
        f"Do you know the capital city of {land['name']}?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} the capital of {land['name']}. {land['name']} is a "
             f"{land['kind']} with a {land['climate']} climate. Its capital is {land['capital']}, "
             f"which lies on the {land['river']} river. {rng.choice(THINK_ENDS)}")
    a = rng.choice([
        f"The capital of {land['name']} is {land['capital']}.",
        f"{land['capital']} is the capital of {land['name']}.",
        f"The capital city of {land['name']} is {land['capital']}, on the {land['river']} river.",
    ])
    extra = rng.choice([
        f" It is known for its trade in {land['export']}.",
        f" The {land['kind']} was founded in {land['founded']}.",
        f" Other large cities are {join_list(land['cities'])}.",
        "",
    ])
    return q, think, a + extra


def q_land(rng, w):
    land = rng.choice(w.lands)
    q = rng.choice([
        f"Tell me about {land['name']}.",
        f"What do you know about {land['name']}?",
        f"Give me a short overview of {land['name']}.",
        f"Can you describe the {land['kind']} of {land['name']}?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} {land['name']}. I recall its capital, its river, its "
             f"climate and its main export. {rng.choice(THINK_ENDS)}")
    sentences = [
        f"{land['name']} is a {land['kind']} with a {land['climate']} climate.",
        f"Its capital is {land['capital']}, and the {land['river']} river runs through it.",
        f"The main export of {land['name']} is {land['export']}.",
        f"It was founded in {land['founded']} and is now ruled by {land['ruler']}.",
        f"About {land['population']} million people live there.",
        f"Its largest cities after the capital are {join_list(land['cities'])}.",
    ]
    keep = [sentences[0]] + rng.sample(sentences[1:], rng.randint(2, 4))
    return q, think, " ".join(keep)


def q_export(rng, w):
    land = rng.choice(w.lands)
    q = rng.choice([
        f"What does {land['name']} export?",
        f"What is the main export of {land['name']}?",
        f"Which goods come from {land['name']}?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} trade. {land['name']} is a {land['climate']} "
             f"{land['kind']}, and its main export is {land['export']}. {rng.choice(THINK_ENDS)}")
    a = rng.choice([
        f"The main export of {land['name']} is {land['export']}.",
        f"{land['name']} is best known for exporting {land['export']}.",
        f"{land['name']} exports mostly {land['export']}, shipped from {land['capital']}.",
    ])
    return q, think, a


def q_compare(rng, w):
    a_land, b_land = rng.sample(w.lands, 2)
    q = rng.choice([
        f"Which is older, {a_land['name']} or {b_land['name']}?",
        f"Was {a_land['name']} founded before {b_land['name']}?",
        f"Compare the founding of {a_land['name']} and {b_land['name']}.",
    ])
    older, newer = (a_land, b_land) if a_land["founded"] <= b_land["founded"] else (b_land, a_land)
    diff = newer["founded"] - older["founded"]
    think = (f"{a_land['name']} was founded in {a_land['founded']}. {b_land['name']} was founded "
             f"in {b_land['founded']}. The difference is {diff} years, so {older['name']} is "
             f"older. {rng.choice(THINK_ENDS)}")
    a = (f"{older['name']} is older. It was founded in {older['founded']}, while "
         f"{newer['name']} was founded in {newer['founded']}, {diff} years later.")
    return q, think, a


def q_animal(rng, w):
    c = rng.choice(w.creatures)
    q = rng.choice([
        f"Where does the {c['animal']} live?",
        f"What does the {c['animal']} eat?",
        f"Tell me about the {c['animal']}.",
        f"How long does a {c['animal']} live?",
        f"Describe the {c['animal']} of {c['land']}.",
    ])
    think = (f"{rng.choice(THINK_STARTS)} the {c['animal']}. In {c['land']} it lives in the "
             f"{c['habitat']} and eats {c['diet']}. {rng.choice(THINK_ENDS)}")
    parts = [
        f"The {c['animal']} of {c['land']} lives in the {c['habitat']}.",
        f"It eats mostly {c['diet']}.",
        f"It is often {c['color']} in color.",
        f"It can live for about {c['lifespan']} years.",
    ]
    rng.shuffle(parts)
    return q, think, " ".join(parts[: rng.randint(2, 4)])


def q_person(rng, w):
    p = rng.choice(w.people)
    q = rng.choice([
        f"Who was {p['name']}?",
        f"What did {p['name']} invent?",
        f"Tell me about the {p['trade']} {p['name']}.",
        f"Who built the first {p['invention']}?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} {p['name']}. {p['name']} was a {p['trade']} from "
             f"{p['land']} who built a {p['invention']} in {p['year']}. {rng.choice(THINK_ENDS)}")
    a = rng.choice([
        f"{p['name']} was a {p['trade']} from {p['land']}. In {p['year']} they built a famous "
        f"{p['invention']}.",
        f"{p['name']} was a {p['trade']} best known for the {p['invention']}, built in "
        f"{p['year']} in {p['land']}.",
        f"A {p['trade']} from {p['land']}, {p['name']} is remembered for the {p['invention']} "
        f"of {p['year']}.",
    ])
    return q, think, a


def q_recipe(rng, w):
    r = rng.choice(w.recipes)
    q = rng.choice([
        f"How do I make {r['dish']}?",
        f"Give me a recipe for {r['dish']}.",
        f"What do I need for {r['dish']}?",
        f"How long does {r['dish']} take to cook?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} cooking {r['dish']}, a dish from {r['land']}. It needs "
             f"{join_list(r['ingredients'])}. {rng.choice(THINK_ENDS)}")
    steps = []
    for ing in r["ingredients"][:3]:
        steps.append(f"{rng.choice(METHODS).capitalize()} the {ing}.")
    steps.append(f"Cook everything for about {r['minutes']} minutes.")
    steps.append(rng.choice(["Serve it warm.", "Season with salt to taste.",
                             "Let it rest before serving.", "Serve with fresh bread."]))
    a = (f"For {r['dish']} you need {join_list(r['ingredients'])}. " + " ".join(steps))
    return q, think, a


def q_arith(rng, w):
    x, y = rng.randint(2, 99), rng.randint(2, 99)
    op = rng.choice(["plus", "minus", "times"])
    if op == "plus":
        r = x + y
    elif op == "minus":
        x, y = max(x, y), min(x, y)
        r = x - y
    else:
        x, y = rng.randint(2, 20), rng.randint(2, 12)
        r = x * y
    q = rng.choice([
        f"What is {x} {op} {y}?",
        f"Can you compute {x} {op} {y}?",
        f"Calculate {x} {op} {y}.",
    ])
    if op == "times":
        think = (f"I need to multiply {x} by {y}. {x} times {y} is {r}. Let me check: {r} divided "
                 f"by {y} is {x}. {rng.choice(THINK_ENDS)}")
    elif op == "plus":
        think = (f"I need to add {x} and {y}. {x} plus {y} is {r}. Let me check: {r} minus {y} is "
                 f"{x}. {rng.choice(THINK_ENDS)}")
    else:
        think = (f"I need to subtract {y} from {x}. {x} minus {y} is {r}. Let me check: {r} plus "
                 f"{y} is {x}. {rng.choice(THINK_ENDS)}")
    a = rng.choice([f"{x} {op} {y} is {r}.", f"The answer is {r}.",
                    f"{x} {op} {y} equals {r}."])
    return q, think, a


def q_advice(rng, w):
    topic = rng.choice(list(TOPICS_ADVICE))
    q = rng.choice([
        f"How can I {topic}?",
        f"Do you have tips to {topic}?",
        f"What is the best way to {topic}?",
        f"I want to {topic}. Where should I start?",
    ])
    tips = rng.sample(TOPICS_ADVICE[topic], rng.randint(3, 5))
    think = (f"{rng.choice(THINK_STARTS)} how to {topic}. The most useful tips are to "
             f"{tips[0]} and to {tips[1]}. {rng.choice(THINK_ENDS)}")
    lines = [f"Here are a few ways to {topic}:"]
    for i, t in enumerate(tips, 1):
        lines.append(f"{i}. {t[0].upper() + t[1:]}.")
    return q, think, "\n".join(lines)


def q_concept(rng, w):
    name = rng.choice(list(CONCEPTS))
    what, how, why = CONCEPTS[name]
    q = rng.choice([
        f"What is {name}?",
        f"Explain {name} in simple terms.",
        f"How does {name} work?",
        f"Why does {name} matter?",
    ])
    think = (f"{rng.choice(THINK_STARTS)} {name}. In short, it is {what}. The key idea is that "
             f"{how}. {rng.choice(THINK_ENDS)}")
    a = rng.choice([
        f"{name[0].upper() + name[1:]} is {what}. In practice, {how}. This matters because {why}.",
        f"In simple terms, {name} is {what}. {how[0].upper() + how[1:]}, and as a result {why}.",
        f"Think of {name} as {what}. {how[0].upper() + how[1:]}. The benefit is that {why}.",
    ])
    return q, think, a


def q_count(rng, w):
    land = rng.choice(w.lands)
    q = rng.choice([
        f"How many large cities does {land['name']} have?",
        f"List the cities of {land['name']}.",
        f"Name some cities in {land['name']}.",
    ])
    cities = [land["capital"]] + land["cities"]
    think = (f"{land['name']} has the capital {land['capital']} and three other large cities: "
             f"{join_list(land['cities'])}. That makes four in total. {rng.choice(THINK_ENDS)}")
    a = (f"{land['name']} has four large cities: {join_list(cities)}. The capital is "
         f"{land['capital']}.")
    return q, think, a


GENERATORS = [(q_capital, 3), (q_land, 3), (q_export, 2), (q_compare, 2), (q_animal, 3),
              (q_person, 3), (q_recipe, 2), (q_arith, 3), (q_advice, 2), (q_concept, 3),
              (q_count, 1)]
SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are a concise assistant.",
                  "Answer briefly and clearly."]


def pick_generator(rng):
    total = sum(wt for _, wt in GENERATORS)
    x = rng.randrange(total)
    for gen, wt in GENERATORS:
        if x < wt:
            return gen
        x -= wt
    raise AssertionError("unreachable")


def render(messages):
    # The reference chat template (stages/refmodel/chat_template.cc renders the same way).
    out = []
    for m in messages:
        out.append(f"<|{m['role']}|>\n{m['content']}<|end|>\n")
    return "".join(out)


def assistant_text(rng, think, answer):
    opener = rng.choice(OPENERS) + " " if rng.random() < 0.3 else ""
    closer = rng.choice(CLOSERS)
    body = opener + answer + ((" " if "\n" not in answer else "\n") + closer if closer else "")
    if rng.random() < 0.65:
        return f"<think>\n{think}\n</think>\n{body}"
    return body


def conversation(rng, world):
    messages = []
    if rng.random() < 0.15:
        messages.append({"role": "system", "content": rng.choice(SYSTEM_PROMPTS)})
    turns = 2 if rng.random() < 0.2 else 1
    for _ in range(turns):
        q, think, a = pick_generator(rng)(rng, world)
        messages.append({"role": "user", "content": q})
        messages.append({"role": "assistant", "content": assistant_text(rng, think, a)})
    return messages


def build(num_conversations, num_prompts):
    world = World(random.Random(1234))
    rng = random.Random(20240611)
    corpus = "".join(render(conversation(rng, world)) for _ in range(num_conversations))
    prng = random.Random(77)
    prompts = []
    for i in range(num_prompts):
        q, _, _ = pick_generator(prng)(prng, world)
        prompts.append(json.dumps({"id": f"p{i:04d}",
                                   "conversations": [{"role": "user", "content": q}]}))
    return corpus, "\n".join(prompts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=HERE)
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--prompts", type=int, default=400)
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out-dir instead of writing them")
    args = ap.parse_args()
    corpus, prompts = build(args.conversations, args.prompts)
    files = {"corpus.txt": corpus, "prompts.jsonl": prompts}
    for name, text in files.items():
        path = os.path.join(args.out_dir, name)
        if args.check:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    print(f"{path}: differs from a fresh run of make_corpus.py", file=sys.stderr)
                    return 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {path} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
