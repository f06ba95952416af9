"""NetworkIn's seed: the member Div Garg (`divgarg`), about 60 other members, companies, events,
posts and the conversations of his connections. Fixed data, so every task starts from the same
network; the decoys the tasks need are here on purpose (Olivia Martin beside Olivia Martinez,
data scientists beside software engineers, New York people outside tech)."""

from __future__ import annotations

from dataclasses import dataclass

from halo.sites.pages import Named


@dataclass(frozen=True)
class Member(Named):
    id: str
    name: str
    headline: str
    location: str
    industry: str
    about: str = ""

    def as_participant(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "headline": self.headline}


@dataclass(frozen=True)
class Company:
    id: str             # lowercase: the key followedCompanies uses
    name: str
    industry: str
    followers: int
    tagline: str
    location: str


@dataclass(frozen=True)
class Event:
    id: str
    title: str
    when: str
    place: str
    organizer: str
    online: bool
    summary: str


ME = Member("divgarg", "Div Garg", "Founder & CEO at AGI Inc | AI agents", "San Francisco Bay Area", "Technology",
            "Building AI agents that use computers the way people do.")

_BAY, _NY, _SEA, _AUS, _LDN = "San Francisco Bay Area", "New York, NY", "Seattle, WA", "Austin, TX", "London, UK"
_TECH, _FIN, _MEDIA, _HEALTH, _EDU, _RETAIL = "Technology", "Financial Services", "Media", "Healthcare", "Education", "Retail"

#: (id, name, headline, location, industry); the first 15 are Div's connections
_ROWS: list[tuple[str, str, str, str, str]] = [
    ("alexchen", "Alex Chen", "Software Engineer at Stripe", _BAY, _TECH),
    ("priyapatel", "Priya Patel", "Product Manager at Google", _BAY, _TECH),
    ("marcusjohnson", "Marcus Johnson", "Senior Software Engineer at Microsoft", _SEA, _TECH),
    ("emilyzhang", "Emily Zhang", "Data Scientist at Airbnb", _BAY, _TECH),
    ("davidkim", "David Kim", "Engineering Manager at Meta", _BAY, _TECH),
    ("sarahwilliams", "Sarah Williams", "Recruiter at OpenAI", _BAY, _TECH),
    ("jameslee", "James Lee", "Founder at Loop Labs (YC S23)", _NY, _TECH),
    ("laurabrown", "Laura Brown", "UX Designer at Apple", _BAY, _TECH),
    ("kevinnguyen", "Kevin Nguyen", "Machine Learning Engineer at NVIDIA", _AUS, _TECH),
    ("rachelgreen", "Rachel Green", "Investment Analyst at Sequoia Capital", _BAY, _FIN),
    ("danielgarcia", "Daniel Garcia", "Software Engineer at Amazon", _SEA, _TECH),
    ("sophiamartin", "Sophia Martin", "Data Scientist at Spotify", _NY, _MEDIA),
    ("michaeltaylor", "Michael Taylor", "CTO at Brightwave", _LDN, _TECH),
    ("ninapatel", "Nina Patel", "Research Scientist at OpenAI", _BAY, _TECH),
    ("tomwilson", "Tom Wilson", "Teaching Assistant at Stanford University", _BAY, _EDU),
    # --- not connected yet -------------------------------------------------------------------
    ("oliviamartinez", "Olivia Martinez", "Product Designer at Figma", _BAY, _TECH),
    ("oliviamartin", "Olivia Martin", "Marketing Manager at Nike", "Portland, OR", _RETAIL),
    ("ethanbrooks", "Ethan Brooks", "Software Engineer at Datadog", _NY, _TECH),
    ("mayarodriguez", "Maya Rodriguez", "Frontend Engineer at Etsy", _NY, _TECH),
    ("jordansmith", "Jordan Smith", "Tech Lead at Two Sigma", _NY, _FIN),
    ("aishakhan", "Aisha Khan", "Software Engineer at Google", _NY, _TECH),
    ("benjaminlevy", "Benjamin Levy", "Founder at Stackline, a New York tech startup", _NY, _TECH),
    ("chloedavis", "Chloe Davis", "Site Reliability Engineer at MongoDB", _NY, _TECH),
    ("isabellarossi", "Isabella Rossi", "Chef and Owner at Rossi Trattoria", _NY, "Food & Beverages"),
    ("henrywalker", "Henry Walker", "Attorney at Walker & Finch LLP", _NY, "Legal"),
    ("gracekim", "Grace Kim", "Nurse Practitioner at NYU Langone", _NY, _HEALTH),
    ("liamobrien", "Liam O'Brien", "Equity Trader at Goldman Sachs", _NY, _FIN),
    ("zoeanderson", "Zoe Anderson", "Journalist at The New York Times", _NY, _MEDIA),
    ("ryanclark", "Ryan Clark", "Software Engineer at Netflix", _BAY, _TECH),
    ("hannahlewis", "Hannah Lewis", "Software Engineer II at Salesforce", _BAY, _TECH),
    ("samuelwright", "Samuel Wright", "Staff Software Engineer at Uber", _BAY, _TECH),
    ("meganhall", "Megan Hall", "Software Engineer at Shopify", "Toronto, ON", _TECH),
    ("victorhuang", "Victor Huang", "Backend Software Engineer at Pinterest", _BAY, _TECH),
    ("julialopez", "Julia Lopez", "Software Engineer at Microsoft", _SEA, _TECH),
    ("omarfarouk", "Omar Farouk", "Senior Data Scientist at Microsoft", _SEA, _TECH),
    ("lisawong", "Lisa Wong", "Data Scientist at Netflix", _BAY, _TECH),
    ("carlossilva", "Carlos Silva", "Lead Data Scientist at Capital One", _NY, _FIN),
    ("annaschmidt", "Anna Schmidt", "Data Scientist at Zalando", "Berlin, Germany", _RETAIL),
    ("peterjones", "Peter Jones", "Data Science Manager at Walmart", _AUS, _RETAIL),
    ("fatimaali", "Fatima Ali", "Data Scientist at Mayo Clinic", "Rochester, MN", _HEALTH),
    ("noahkim", "Noah Kim", "Machine Learning Researcher at Google DeepMind", _LDN, _TECH),
    ("ellathompson", "Ella Thompson", "Product Manager at Notion", _BAY, _TECH),
    ("lucasmoreau", "Lucas Moreau", "Growth Marketer at Canva", "Sydney, Australia", _TECH),
    ("miaperez", "Mia Perez", "Talent Partner at Andreessen Horowitz", _BAY, _FIN),
    ("jacobmiller", "Jacob Miller", "Account Executive at Salesforce", _AUS, _TECH),
    ("avasingh", "Ava Singh", "Program Manager at Microsoft", _SEA, _TECH),
    ("williamscott", "William Scott", "Mechanical Engineer at Tesla", _AUS, "Automotive"),
    ("charlotteyoung", "Charlotte Young", "Professor of Computer Science at Columbia University", _NY, _EDU),
    ("danielpark", "Daniel Park", "Solutions Architect at Amazon Web Services", _SEA, _TECH),
    ("amelia-king", "Amelia King", "Head of People at Ramp", _NY, _FIN),
    ("jackturner", "Jack Turner", "Venture Partner at Lightspeed", _BAY, _FIN),
    ("evelynadams", "Evelyn Adams", "Security Engineer at Cloudflare", _AUS, _TECH),
    ("leoharris", "Leo Harris", "iOS Engineer at Duolingo", "Pittsburgh, PA", _TECH),
    ("scarlettbaker", "Scarlett Baker", "Community Manager at Discord", _BAY, _TECH),
    ("masonnelson", "Mason Nelson", "Civil Engineer at AECOM", _LDN, "Construction"),
    ("lilymitchell", "Lily Mitchell", "Software Engineering Intern at AGI Inc", _BAY, _TECH),
    ("gabrielcooper", "Gabriel Cooper", "AI Engineer at Anthropic", _BAY, _TECH),
    ("harperreed", "Harper Reed", "DevRel at Vercel", _NY, _TECH),
    ("owenward", "Owen Ward", "Operations Manager at FedEx", "Memphis, TN", "Logistics"),
    ("stellacox", "Stella Cox", "Data Engineer at Snowflake", _BAY, _TECH),
]

MEMBERS: tuple[Member, ...] = tuple(
    Member(mid, name, headline, location, industry,
           f"{name.split()[0]} works as {headline.replace(' at ', ' at ', 1)} and is based in {location}.")
    for mid, name, headline, location, industry in _ROWS
)
MEMBER_BY_ID: dict[str, Member] = {m.id: m for m in MEMBERS} | {ME.id: ME}
CONNECTIONS: tuple[str, ...] = tuple(m.id for m in MEMBERS[:15])
LOCATIONS: tuple[str, ...] = (_BAY, _NY, _SEA, _AUS, _LDN)
INDUSTRIES: tuple[str, ...] = tuple(sorted({m.industry for m in MEMBERS}))

COMPANIES: tuple[Company, ...] = (
    Company("microsoft", "Microsoft", "Software Development", 22_410_000, "Empower every person and organization on the planet to achieve more.", "Redmond, WA"),
    Company("google", "Google", "Software Development", 31_020_000, "Organize the world's information.", "Mountain View, CA"),
    Company("apple", "Apple", "Computers and Electronics Manufacturing", 16_880_000, "Think different.", "Cupertino, CA"),
    Company("amazon", "Amazon", "Software Development", 30_150_000, "Earth's most customer-centric company.", "Seattle, WA"),
    Company("openai", "OpenAI", "Research Services", 6_240_000, "Ensuring that artificial general intelligence benefits all of humanity.", "San Francisco, CA"),
    Company("meta", "Meta", "Software Development", 10_870_000, "Giving people the power to build community.", "Menlo Park, CA"),
    Company("nvidia", "NVIDIA", "Computer Hardware Manufacturing", 4_930_000, "The accelerated computing company.", "Santa Clara, CA"),
    Company("stripe", "Stripe", "Technology, Information and Internet", 1_410_000, "Financial infrastructure for the internet.", "San Francisco, CA"),
    Company("agiinc", "AGI Inc", "Technology, Information and Internet", 18_300, "AI agents for everyone.", "San Francisco, CA"),
    Company("brightwave", "Brightwave", "Software Development", 8_200, "Research assistant for investors.", "London, UK"),
    Company("rossitrattoria", "Rossi Trattoria", "Restaurants", 1_150, "Handmade pasta in the West Village.", "New York, NY"),
    Company("walkerfinch", "Walker & Finch LLP", "Law Practice", 3_400, "Corporate law for growing companies.", "New York, NY"),
)
COMPANY_BY_ID: dict[str, Company] = {c.id: c for c in COMPANIES}

EVENTS: tuple[Event, ...] = (
    Event("ai-agents-summit", "AI Agents Summit 2024", "Thu, Aug 8, 2024, 9:00 AM PDT", "Moscone West, San Francisco",
          "AGI Inc", False, "Builders and researchers on agents that use browsers and apps: talks, demos and a hiring fair."),
    Event("nyc-tech-mixer", "NYC Tech Founders Mixer", "Tue, Jul 30, 2024, 6:30 PM EDT", "Brooklyn Navy Yard, New York",
          "Stackline", False, "An evening for founders, engineers and investors in the New York tech scene."),
    Event("women-in-ml", "Women in Machine Learning Meetup", "Wed, Jul 24, 2024, 5:30 PM PDT", "Online",
          "WiML Bay Area", True, "Lightning talks on LLM evaluation, then small-group mentoring."),
    Event("startup-fundraising-101", "Startup Fundraising 101", "Mon, Jul 22, 2024, 12:00 PM PDT", "Online",
          "Sequoia Capital", True, "How seed rounds work in 2024, with a live Q&A."),
    Event("react-conf-watch", "React Conf Watch Party", "Sat, Aug 3, 2024, 10:00 AM PDT", "Vercel HQ, San Francisco",
          "Vercel", False, "Watch the keynote together, pizza and demos afterwards."),
    Event("career-fair-stanford", "Stanford Summer Career Fair", "Fri, Jul 26, 2024, 1:00 PM PDT", "Tresidder Union, Stanford",
          "Stanford University", False, "Meet 80 companies hiring interns and new graduates."),
)
EVENT_BY_ID: dict[str, Event] = {e.id: e for e in EVENTS}

#: (post id, author, text, likes)
SEED_POSTS: tuple[tuple[str, str, str, int], ...] = (
    ("post-1", "priyapatel", "We just shipped offline maps for 40 new countries. Proud of this team!", 412),
    ("post-2", "kevinnguyen", "Wrote up how we cut our training costs by 30% with mixed precision. Link in comments.", 268),
    ("post-3", "sarahwilliams", "OpenAI is hiring research engineers in San Francisco. Reach out if you want a referral.", 931),
    ("post-4", "jameslee", "Loop Labs is one year old today. Thank you to our first 100 customers.", 187),
    ("post-5", "laurabrown", "Five things I learned designing for visionOS.", 355),
    ("post-6", "michaeltaylor", "London friends: we are hiring two backend engineers at Brightwave.", 96),
    ("post-7", "emilyzhang", "My talk on causal inference at scale is now online.", 143),
    ("post-8", "tomwilson", "Office hours for CS224N moved to Thursdays.", 52),
)

#: the conversations Div already has, by connection: (author, text) lines after the connection messages
SEED_CHATS: dict[str, tuple[tuple[str, str], ...]] = {
    "alexchen": (("alexchen", "Hey Div, congrats on the launch!"), ("divgarg", "Thanks Alex! Let's grab coffee soon.")),
    "priyapatel": (("priyapatel", "Are you coming to the AI Agents Summit?"),),
    "marcusjohnson": (("divgarg", "Great meeting you at the Seattle meetup."), ("marcusjohnson", "Likewise, let's stay in touch.")),
    "emilyzhang": (("emilyzhang", "Loved your post on browser agents."),),
    "davidkim": (("davidkim", "Do you have time next week to chat about hiring?"),),
    "sarahwilliams": (("sarahwilliams", "Thanks for connecting!"),),
    "jameslee": (("jameslee", "Would love your feedback on our demo."), ("divgarg", "Send it over!")),
    "laurabrown": (("laurabrown", "Thanks for the intro to your design lead."),),
    "kevinnguyen": (("kevinnguyen", "Are you hiring ML engineers?"),),
    "rachelgreen": (("rachelgreen", "Let me know when you start raising."),),
    "danielgarcia": (("danielgarcia", "Congrats on the new role!"),),
    "sophiamartin": (("sophiamartin", "Happy to share our experimentation playbook."),),
    "michaeltaylor": (("michaeltaylor", "Next time you are in London, dinner is on me."),),
    "ninapatel": (("ninapatel", "Your benchmark paper was great."),),
    "tomwilson": (("tomwilson", "Thanks for the guest lecture!"),),
}
