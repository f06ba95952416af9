"""TopWork's seed: the client Sarah Johnson, the freelancers she can find, her conversations, job
posts and past hires. Fixed data with the decoys the tasks need: designers beside full-stack,
backend and Python developers; Ashley Carter and Brandon Lee beside Ashley Campbell and Brandon
Martinez; data jobs beside jobs whose skills merely look technical."""

from __future__ import annotations

from dataclasses import dataclass

from halo.sites.pages import Named

CLIENT = {"name": "Sarah Johnson", "company": "Johnson Digital", "location": "Austin, TX"}


@dataclass(frozen=True)
class Freelancer(Named):
    id: str
    name: str
    title: str
    rate: int
    location: str
    skills: tuple[str, ...]
    availability: str
    rating: float
    jobs_done: int
    summary: str


def _f(fid, name, title, rate, location, skills, availability="Available now", rating=4.9, jobs_done=24, summary=""):
    return Freelancer(fid, name, title, rate, location, tuple(skills), availability, rating, jobs_done,
                      summary or f"{title} with {jobs_done} completed TopWork jobs. Skilled in {', '.join(skills[:3])}.")


FREELANCERS: tuple[Freelancer, ...] = (
    _f("jasonmiller", "Jason Miller", "Full Stack Developer (React, Node.js)", 75, "Denver, CO", ["React", "Node.js", "PostgreSQL", "TypeScript"], jobs_done=41),
    _f("priyasharma", "Priya Sharma", "Full-Stack Engineer | Django & React", 68, "Toronto, Canada", ["Python", "Django", "React"], jobs_done=33),
    _f("carlosmendez", "Carlos Mendez", "Backend Developer | Go & PostgreSQL", 70, "Mexico City, Mexico", ["Go", "PostgreSQL", "Kubernetes"], jobs_done=19),
    _f("weichen", "Wei Chen", "Back-End Engineer (Java, Spring Boot)", 65, "Singapore", ["Java", "Spring Boot", "AWS"], "Available in 2 weeks", jobs_done=27),
    _f("ananyaiyer", "Ananya Iyer", "Python Developer | FastAPI & Automation", 55, "Bengaluru, India", ["Python", "FastAPI", "Selenium"], jobs_done=52),
    _f("tomasnovak", "Tomas Novak", "Python Developer and Scripting Expert", 48, "Prague, Czechia", ["Python", "Flask", "Pandas"], jobs_done=15),
    _f("emilyross", "Emily Ross", "UI/UX Designer", 60, "Austin, TX", ["Figma", "User Research", "Prototyping"], jobs_done=38),
    _f("lucasgreen", "Lucas Green", "Product Designer (Figma, Design Systems)", 72, "London, UK", ["Figma", "Design Systems", "Webflow"], jobs_done=21),
    _f("sofiabianchi", "Sofia Bianchi", "Graphic Designer & Brand Identity", 45, "Milan, Italy", ["Logo Design", "Adobe Illustrator", "Branding"], jobs_done=64),
    _f("ashleycampbell", "Ashley Campbell", "Mobile App Developer (Flutter)", 62, "Seattle, WA", ["Flutter", "Dart", "Firebase"], jobs_done=18),
    _f("ashleycarter", "Ashley Carter", "Copywriter for SaaS Brands", 50, "Chicago, IL", ["Copywriting", "SEO Writing", "Email Campaigns"], jobs_done=45),
    _f("brandonmartinez", "Brandon Martinez", "DevOps Engineer | AWS & Terraform", 80, "Phoenix, AZ", ["AWS", "Terraform", "CI/CD"], jobs_done=29),
    _f("brandonlee", "Brandon Lee", "Video Editor & Motion Graphics", 40, "Los Angeles, CA", ["Premiere Pro", "After Effects", "YouTube"], jobs_done=57),
    _f("nataliekim", "Natalie Kim", "Data Analyst | SQL & Tableau", 58, "New York, NY", ["SQL", "Tableau", "Excel"], jobs_done=22),
    _f("omarhassan", "Omar Hassan", "Financial Analyst & FP&A Consultant", 85, "Dubai, UAE", ["Financial Modeling", "Excel", "Forecasting"], jobs_done=17),
    _f("grace-liu", "Grace Liu", "SEO Specialist", 42, "Vancouver, Canada", ["SEO", "Google Analytics", "Content Strategy"], jobs_done=36),
    _f("mikechen", "Mike Chen", "Content Writer", 38, "Portland, OR", ["Blog Writing", "Editing", "Research"], jobs_done=48),
    _f("oliviabrown", "Olivia Brown", "Bookkeeper (QuickBooks)", 35, "Atlanta, GA", ["QuickBooks", "Reconciliation", "Payroll"], jobs_done=61),
    _f("danielwhite", "Daniel White", "Video Producer", 55, "Nashville, TN", ["Video Production", "Storyboarding", "Color Grading"], jobs_done=26),
    _f("alexrodriguez", "Alex Rodriguez", "Virtual Assistant", 25, "Miami, FL", ["Scheduling", "Email Management", "Customer Support"], jobs_done=9),
    _f("kevinpark", "Kevin Park", "Project Coordinator", 45, "San Diego, CA", ["Asana", "Scrum", "Stakeholder Updates"], jobs_done=31),
    _f("lisawang", "Lisa Wang", "Marketing Consultant", 70, "Boston, MA", ["Go-to-market", "Positioning", "Campaign Planning"], jobs_done=40),
    _f("rajpatel", "Raj Patel", "QA Tester (Manual & Cypress)", 35, "Pune, India", ["Cypress", "Test Plans", "Bug Reports"], jobs_done=58),
)
FREELANCER_BY_ID: dict[str, Freelancer] = {f.id: f for f in FREELANCERS}

#: existing conversations: (freelancer, unread, [(author, text)]) with "Sarah Johnson" for her own lines
SEED_CHATS: tuple[tuple[str, bool, tuple[tuple[str, str], ...]], ...] = (
    ("alexrodriguez", False, (("Alex Rodriguez", "Hi Sarah! I'm new to TopWork and still setting up my account. Could you help me get set up for your admin project?"),)),
    ("mikechen", True, (("Sarah Johnson", "Thanks for sending the outline."), ("Mike Chen", "What's the time frame for the first three blog posts?"))),
    ("oliviabrown", True, (("Olivia Brown", "When do you need the Q2 reconciliation finished by?"),)),
    ("danielwhite", True, (("Daniel White", "Quick question: what's your deadline for the promo video edit?"),)),
    ("kevinpark", False, (("Kevin Park", "Thanks again for the great collaboration on the launch!"), ("Sarah Johnson", "Likewise Kevin, I'd love to work together again."))),
    ("lisawang", False, (("Lisa Wang", "The final campaign report is in your inbox."),)),
)

#: past contracts (the "My hires" page); no contractTitle key, so only new offers look like offers to the scripts
PAST_HIRES: tuple[dict, ...] = (
    {"id": "hire-1", "freelancerId": "kevinpark", "title": "Product Launch Coordination", "rate": 45, "period": "Jan 2024 - Apr 2024", "feedback": 5.0},
    {"id": "hire-2", "freelancerId": "lisawang", "title": "Q1 Marketing Campaign", "rate": 70, "period": "Feb 2024 - Mar 2024", "feedback": 4.8},
    {"id": "hire-3", "freelancerId": "rajpatel", "title": "Checkout Flow Testing", "rate": 35, "period": "May 2024 - Jun 2024", "feedback": 4.9},
)

DATA_CATEGORY = "Data Science & Analytics"


def _job(jid, title, description, category, subcategory, skills, rate_from, rate_to, size, time, level, hire, applicants):
    return {"id": jid, "title": title, "description": description, "category": category, "subcategory": subcategory,
            "skills": list(skills), "hourlyRateFrom": rate_from, "hourlyRateTo": rate_to, "estimateSize": size,
            "estimateTime": time, "estimateLevelExperience": level, "estimateHireOpportunity": hire, "status": "published",
            "applications": [{"freelancerId": f, "bid": FREELANCER_BY_ID[f].rate} for f in applicants]}


SEED_JOBS: tuple[dict, ...] = (
    _job("job-1", "Data Analyst for Sales Dashboard", "Build a weekly sales dashboard from our CRM exports.", DATA_CATEGORY,
         "Data Analysis & Testing", ["SQL", "Tableau", "Excel"], 40, 60, "Medium", "1 to 3 months", "Intermediate", "no", ["nataliekim"]),
    _job("job-2", "Machine Learning Engineer for Churn Prediction", "Train and deploy a churn model on subscription data.",
         DATA_CATEGORY, "Machine Learning", ["Python", "scikit-learn", "Pandas"], 60, 90, "Large", "3 to 6 months", "Expert", "yes", ["tomasnovak"]),
    _job("job-3", "Logo Design for Artisan Bakery", "A friendly logo and color palette for our new bakery.", "Design & Creative",
         "Branding & Logo Design", ["Logo Design", "Adobe Illustrator", "Branding"], 30, 50, "Small", "1 to 3 months", "Intermediate", "no", ["sofiabianchi"]),
    _job("job-4", "Full Stack Developer for Fitness App MVP", "React front end and Node API for a workout tracking app.",
         "Web, Mobile & Software Dev", "Full Stack Development", ["React", "Node.js", "PostgreSQL"], 55, 80, "Large", "More than 6 months", "Expert", "yes", ["priyasharma"]),
    _job("job-5", "Python Backend Developer (FastAPI)", "Build REST endpoints and background workers for our booking service.",
         "Web, Mobile & Software Dev", "Back-End Development", ["Python", "FastAPI", "Docker"], 50, 70, "Medium", "3 to 6 months", "Intermediate", "no", ["ananyaiyer", "ashleycampbell", "brandonmartinez"]),
    _job("job-6", "Social Media Manager", "Plan and publish posts for Instagram and LinkedIn.", "Sales & Marketing",
         "Social Media Marketing", ["Instagram", "Content Calendar", "Canva"], 25, 40, "Small", "More than 6 months", "Entry", "no", ["grace-liu"]),
)

SIZES = ("Large", "Medium", "Small")
DURATIONS = ("More than 6 months", "3 to 6 months", "1 to 3 months")
LEVELS = (("Entry", "Looking for someone relatively new to this field"),
          ("Intermediate", "Looking for substantial experience in this field"),
          ("Expert", "Looking for comprehensive and deep expertise in this field"))
HIRE_CHOICES = (("yes", "Yes, this could become full time"), ("no", "No, not at this time"))
CATEGORIES = ("Web, Mobile & Software Dev", DATA_CATEGORY, "Design & Creative", "Sales & Marketing",
              "Accounting & Consulting", "Admin Support", "Writing")
